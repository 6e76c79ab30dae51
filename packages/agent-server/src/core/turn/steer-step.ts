import { EventType, messageText } from '@interlude/protocol'
import type { AgUiEvent, Message } from '@interlude/protocol'
import type { NewEvent } from '../../store/store.ts'
import { toNewEvent } from '../ev.ts'
import { guardInput } from './guardrail-step.ts'
import type { Step, Turn } from './turn-state.ts'

/**
 * How a user message that joined the running turn shows in the log: AG-UI's text message with `role: "user"` and the
 * message's own id, so followers, replays and clients see it where it joined (docs/protocol.md#multitask).
 */
export function steerEvents(message: Message): NewEvent[] {
  const text = messageText(message)
  return [
    toNewEvent({ type: EventType.TEXT_MESSAGE_START, messageId: message.id, role: 'user' }),
    // AG-UI's delta is never empty: a message without text (only images, files) has no content event.
    ...(text.length > 0
      ? [toNewEvent({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: message.id, delta: text })]
      : []),
    toNewEvent({ type: EventType.TEXT_MESSAGE_END, messageId: message.id }),
  ]
}

/**
 * The steer step, before every model request and before the turn would end with its answer: the steers waiting for
 * this run (docs/protocol.md#multitask) join the turn — their messages and events in one fenced write, taken by
 * exactly one run wherever it executes. Costs one indexed read when none waits. Joined messages pass the agent's
 * input guardrails like the run's own message (the last one is checked). `none`: nothing joined; `joined`: the
 * next model request reads them; a `Step`: a guardrail paused the turn.
 */
export async function* joinSteers(turn: Turn): AsyncGenerator<AgUiEvent, 'none' | 'joined' | Step, undefined> {
  const { store } = turn.deps
  if (!store.hasSteers || !(await store.hasSteers(turn.plan.threadId))) return 'none'
  const taken = await turn.writes.takeSteers(steerEvents)
  if (taken.messages.length === 0) return 'none'
  turn.deps.publish?.(taken.events)
  turn.join(taken.messages)
  return (yield* guardInput(turn)) ?? 'joined'
}
