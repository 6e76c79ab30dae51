import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ModelChunk, ModelProvider, ModelRequest } from './model.ts'

/** One scripted model response: some text, then tool calls. */
export interface ScriptedResponse {
  readonly text?: string
  readonly toolCalls?: readonly { readonly name: string; readonly args: unknown; readonly id?: string }[]
}

/** Decides the response from the request (deterministic scripts read the history). */
export type Script = (request: ModelRequest) => ScriptedResponse

export interface ScriptedModelOptions {
  /** Delay between streamed tokens, in ms (0 in tests and benchmarks). @default 0 */
  readonly pacingMs?: number
  /** Name reported by the provider. @default 'scripted' */
  readonly name?: string
}

/** Splits text into word-sized tokens that keep their trailing whitespace. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text.length > 0 ? [text] : [])
}

/** Splits argument JSON into a few fragments, as real models stream them. */
function fragments(json: string): string[] {
  if (json.length <= 8) return [json]
  const size = Math.ceil(json.length / 3)
  const parts: string[] = []
  for (let i = 0; i < json.length; i += size) parts.push(json.slice(i, i + size))
  return parts
}

/**
 * A deterministic model that streams text and tool calls through the same interface as a real
 * provider: the offline default and the model of tests and benchmarks.
 */
export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ModelProvider {
  const pacingMs = options.pacingMs ?? 0
  return {
    name: options.name ?? 'scripted',
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const response = script(request)
      const pause = async () => {
        if (pacingMs > 0) await sleep(pacingMs, undefined, { signal: request.signal }).catch(() => undefined)
      }
      for (const token of tokenize(response.text ?? '')) {
        if (request.signal.aborted) return
        yield { type: 'text', delta: token }
        await pause()
      }
      let index = 0
      for (const call of response.toolCalls ?? []) {
        if (request.signal.aborted) return
        const key = String(index++)
        yield { type: 'tool_call_start', id: call.id ?? `call_${randomUUID()}`, name: call.name, key }
        for (const part of fragments(JSON.stringify(call.args ?? {}))) {
          yield { type: 'tool_call_args', key, delta: part }
          await pause()
        }
      }
    },
  }
}
