import type OpenAI from 'openai'
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions'
import { InterludeError } from '@interlude/protocol'
import type { ModelChunk, ModelProvider, ModelRequest } from './model.ts'
import { isModuleNotFound, missingPeer } from '../store/optional-peer.ts'
import { toOpenAIMessages } from './openai-messages.ts'
import { ToolCallKeys } from './tool-call-keys.ts'

/**
 * A chat-completions client: an `OpenAI` instance from the `openai` package fits. Typed here so that
 * the public types need no `openai` install (it is an optional peer dependency).
 */
export interface OpenAIChatClient {
  readonly chat: {
    readonly completions: {
      create(body: never, options: { signal: AbortSignal }): PromiseLike<AsyncIterable<unknown>>
    }
  }
}

export interface OpenAIModelOptions {
  /** @default process.env.OPENAI_API_KEY */
  readonly apiKey?: string
  /** An OpenAI-compatible endpoint. @default process.env.OPENAI_BASE_URL (or the OpenAI API) */
  readonly baseURL?: string
  /** @default process.env.OPENAI_MODEL ?? 'gpt-4o-mini' */
  readonly model?: string
  /** SDK retries for connection errors, 429 and 5xx. @default 2 */
  readonly maxRetries?: number
  /** Request timeout in ms. @default 120000 */
  readonly timeoutMs?: number
  readonly temperature?: number
  /** A preconfigured client, e.g. `new OpenAI({...})` (overrides apiKey/baseURL/maxRetries/timeoutMs). */
  readonly client?: OpenAIChatClient
}

/**
 * The OpenAI provider: streaming chat completions with tools on the official `openai` SDK. Works
 * with any OpenAI-compatible server through `baseURL` / OPENAI_BASE_URL. A stream that ends
 * without a `finish_reason` is reported as a failure (truncation is not a complete answer).
 */
export function openaiModel(options: OpenAIModelOptions = {}): ModelProvider {
  const model = options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini'
  let client = options.client as OpenAI | undefined
  const getClient = async (): Promise<OpenAI> => {
    // Loaded on first use: `openai` is an optional peer dependency.
    const OpenAIClient = await import('openai').then(
      (mod) => mod.default,
      (error: unknown) => {
        throw isModuleNotFound(error) ? missingPeer('openai', 'openaiModel()', error) : error
      },
    )
    client ??= new OpenAIClient({
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? '',
      ...((options.baseURL ?? process.env.OPENAI_BASE_URL)
        ? { baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL }
        : {}),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 120_000,
    })
    return client
  }
  return {
    name: `openai:${model}`,
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const tools: ChatCompletionFunctionTool[] = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }))
      let stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>
      try {
        stream = await (client ?? (await getClient())).chat.completions.create(
          {
            model,
            messages: toOpenAIMessages(request),
            stream: true,
            ...(tools.length > 0 ? { tools } : {}),
            ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
          },
          { signal: request.signal },
        )
      } catch (error) {
        throw new InterludeError('MODEL_ERROR', 'The model request failed.', { cause: error })
      }
      const keys = new ToolCallKeys()
      const started = new Set<string>()
      const early = new Map<string, { id: string | undefined; args: string }>()
      let finished = false
      try {
        for await (const chunk of stream) {
          const choice = chunk.choices[0]
          if (!choice) continue
          const delta = choice.delta
          if (typeof delta?.content === 'string' && delta.content.length > 0)
            yield { type: 'text', delta: delta.content }
          for (const call of delta?.tool_calls ?? []) {
            const key = keys.keyOf(call)
            const name = call.function?.name
            const args = call.function?.arguments ?? ''
            if (!started.has(key)) {
              // Some servers send fragments before the name: hold them until the call is named.
              const pending = early.get(key) ?? { id: undefined, args: '' }
              pending.id ??= call.id
              pending.args += args
              if (!name) {
                early.set(key, pending)
                continue
              }
              early.delete(key)
              started.add(key)
              yield { type: 'tool_call_start', id: pending.id, name, key }
              if (pending.args.length > 0) yield { type: 'tool_call_args', key, delta: pending.args }
              continue
            }
            if (args.length > 0) yield { type: 'tool_call_args', key, delta: args }
          }
          if (choice.finish_reason) finished = true
        }
      } catch (error) {
        if (request.signal.aborted) return
        throw new InterludeError('MODEL_ERROR', 'The model stream failed.', { cause: error })
      }
      if (!finished && !request.signal.aborted) throw new InterludeError('MODEL_ERROR', 'The model stream ended early.')
    },
  }
}
