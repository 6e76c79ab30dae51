import { GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { GuardrailMetadata, Message, WithheldMessage } from '@interlude/protocol'
import { NONE } from './immutable.ts'
import type { PendingInterruptBatch } from './types.ts'

/**
 * Answers a failed output guardrail holds back (docs/guardrails.md#withheld-answers), derived from the open batch: its
 * `interlude:guardrail` interrupts about an answer carry the text. Nothing is stored twice, so a restore, another tab
 * and the end of the batch agree by construction. Derived values keep their identity while their inputs do.
 */

const byBatch = new WeakMap<PendingInterruptBatch, readonly WithheldMessage[]>()

/** The withheld answers of the open batch, in batch order (the same array for the same batch). */
export function withheldOf(pending: PendingInterruptBatch | undefined): readonly WithheldMessage[] {
  if (pending === undefined) return NONE
  let withheld = byBatch.get(pending)
  if (withheld === undefined) {
    const found: WithheldMessage[] = []
    for (const interrupt of pending.interrupts) {
      const m = interrupt.metadata as Partial<GuardrailMetadata> | undefined
      if (interrupt.reason !== GUARDRAIL_INTERRUPT_REASON || m?.on !== 'output' || typeof m.messageId !== 'string')
        continue
      const { messageId, guardrail = '', reason = '', content = '' } = m
      found.push(Object.freeze({ messageId, interruptId: interrupt.id, guardrail, reason, content }))
    }
    withheld = found.length === 0 ? NONE : Object.freeze(found)
    byBatch.set(pending, withheld)
  }
  return withheld
}

const shown = new WeakMap<readonly Message[], { withheld: readonly WithheldMessage[]; messages: readonly Message[] }>()

/**
 * The messages as shown: the history, and each withheld answer it does not hold yet (a pause's snapshot leaves it
 * out; a reload never had it) as an assistant message at the end — so it renders, marked by `withheld`, until the
 * batch is decided: allowed, the server streams it into the history; blocked, it is gone.
 */
export function shownMessages(messages: readonly Message[], withheld: readonly WithheldMessage[]): readonly Message[] {
  if (withheld.length === 0) return messages
  const cached = shown.get(messages)
  if (cached?.withheld === withheld) return cached.messages
  const ids = new Set(messages.map((m) => m.id))
  const missing = withheld.filter((w) => !ids.has(w.messageId))
  const result =
    missing.length === 0
      ? messages
      : Object.freeze([
          ...messages,
          ...missing.map((w): Message => Object.freeze({ id: w.messageId, role: 'assistant', content: w.content })),
        ])
  shown.set(messages, { withheld, messages: result })
  return result
}
