import type { Message } from '@interlude/protocol'
import type { ModelChunk, ModelProvider, ModelRequest } from '../models/model.ts'
import { scriptedModel } from '../models/scripted.ts'
import { commandScript } from './test-agents.ts'

/**
 * A model for queue tests: it answers the last user message with `answer <text>`; a message starting with `hold`
 * first streams one token and waits until `release(text)` (or the run's cancel); a JSON message is a command
 * (`commandScript`, e.g. a tool call). `started` and `finished` record the order of its calls, `requests` what each read.
 */
export function queueModel(): {
  model: ModelProvider
  started: string[]
  finished: string[]
  /** The messages of each call, in order (what the model read). */
  requests: (readonly Message[])[]
  release(text: string): void
} {
  const gates = new Map<string, () => void>()
  const started: string[] = []
  const requests: (readonly Message[])[] = []
  const finished: string[] = []
  const lastUser = (messages: readonly Message[]) =>
    String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '')
  const commands = scriptedModel(commandScript)
  const model: ModelProvider = {
    name: 'queue',
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const text = lastUser(request.messages)
      // A held call's gate exists before anybody can see that the call started.
      const gate = text.startsWith('hold')
        ? new Promise<void>((resolve) => {
            gates.set(text, resolve)
            request.signal.addEventListener('abort', () => resolve(), { once: true })
          })
        : undefined
      started.push(text)
      requests.push(request.messages)
      if (text.startsWith('{')) {
        yield* commands.stream(request)
        finished.push(text)
        return
      }
      if (gate) {
        yield { type: 'text', delta: 'waiting ' }
        await gate
      }
      yield { type: 'text', delta: `answer ${text}` }
      finished.push(text)
    },
  }
  return { model, started, finished, requests, release: (text) => gates.get(text)?.() }
}
