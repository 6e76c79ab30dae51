import type OpenAI from 'openai'
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions'
import { InterludeError } from '@interlude/protocol'
import { SERVER_DEFAULTS } from '../config/defaults.ts'
import type { ModelChunk, ModelProvider, ModelRequest, ModelUsage } from './model.ts'
import { isModuleNotFound, missingPeer } from '../store/optional-peer.ts'
import { isRetryableRequestError, modelError, requestError, statusOf } from './model-errors.ts'
import { toOpenAIMessages } from './openai-messages.ts'
import { abortableSleep, retryDelayMs } from './openai-retry.ts'
import { CallGuard } from './openai-stream-guard.ts'
import type { ModelTimeouts } from './openai-stream-guard.ts'
import { ToolCallKeys } from './tool-call-keys.ts'

/**
 * A chat-completions client: an `OpenAI` instance from the `openai` package fits. Typed here so that
 * the public types need no `openai` install (it is an optional peer dependency).
 */
export interface OpenAIChatClient {
  readonly chat: {
    readonly completions: {
      create(
        body: never,
        options: { signal: AbortSignal; maxRetries?: number; timeout?: number },
      ): PromiseLike<AsyncIterable<unknown>>
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
  /**
   * Retries for connection errors, 408, 409, 429 and 5xx, before the stream starts (our own loop: the
   * SDK's is off, its waits cannot be aborted). @default SERVER_DEFAULTS.openai
   */
  readonly maxRetries?: number
  /** The longest single back-off wait, whatever `Retry-After` asks for. @default SERVER_DEFAULTS.openai */
  readonly maxRetryDelayMs?: number
  /** Time to response headers, per attempt (0: off). @default SERVER_DEFAULTS.openai */
  readonly timeoutMs?: number
  /**
   * Silence between two streamed chunks (SSE comments do not count) before the call fails (0: off).
   * @default SERVER_DEFAULTS.openai
   */
  readonly idleTimeoutMs?: number
  /** The whole model call: attempts, waits and stream (0: off). @default SERVER_DEFAULTS.openai */
  readonly totalTimeoutMs?: number
  /** `max_completion_tokens` of every request (0: not sent). @default SERVER_DEFAULTS.openai */
  readonly maxCompletionTokens?: number
  /** Send `stream_options: { include_usage: true }` (some compatible servers reject it). @default true */
  readonly includeUsage?: boolean
  readonly temperature?: number
  /** Called before each back-off wait (for logs and metrics): which retry, how long, the upstream status. */
  readonly onRetry?: (retry: { readonly attempt: number; readonly delayMs: number; readonly status?: number }) => void
  /** A preconfigured client, e.g. `new OpenAI({...})` (overrides apiKey/baseURL). */
  readonly client?: OpenAIChatClient
}

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk

function usageOf(chunk: Chunk): ModelUsage | undefined {
  const u = chunk.usage
  if (!u || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined
  return {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    totalTokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens,
  }
}

/**
 * The OpenAI provider: streaming chat completions with tools on the official `openai` SDK. Works
 * with any OpenAI-compatible server through `baseURL` / OPENAI_BASE_URL. Every failure is a typed
 * `MODEL_ERROR` (`model-errors.ts`); a stream that ends without a `finish_reason`, or with `length` or
 * `content_filter`, is not a complete answer and fails too (docs/protocol.md#model-errors).
 */
export function openaiModel(options: OpenAIModelOptions = {}): ModelProvider {
  const model = options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini'
  const d = SERVER_DEFAULTS.openai
  const maxRetries = options.maxRetries ?? d.maxRetries
  const maxRetryDelayMs = options.maxRetryDelayMs ?? d.maxRetryDelayMs
  const timeouts: ModelTimeouts = {
    headersMs: options.timeoutMs ?? d.timeoutMs,
    idleMs: options.idleTimeoutMs ?? d.idleTimeoutMs,
    totalMs: options.totalTimeoutMs ?? d.totalTimeoutMs,
  }
  const maxCompletionTokens = options.maxCompletionTokens ?? d.maxCompletionTokens
  const includeUsage = options.includeUsage ?? true
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
      maxRetries: 0,
    })
    return client
  }

  /** Sends the request, retrying what may succeed later; every wait ends at once when the guard aborts. */
  async function open(body: never, guard: CallGuard): Promise<AsyncIterable<Chunk>> {
    const sdk = client ?? (await getClient())
    for (let attempt = 0; ; attempt++) {
      guard.awaitingHeaders()
      try {
        // The SDK's own retries and timeout are off: the guard bounds the call.
        const stream = await sdk.chat.completions.create(body, {
          signal: guard.signal,
          maxRetries: 0,
          timeout: 2 ** 31 - 1,
        })
        return stream as unknown as AsyncIterable<Chunk>
      } catch (error) {
        if (guard.signal.aborted) throw error
        if (attempt >= maxRetries || !isRetryableRequestError(error)) throw requestError(error)
        guard.pause()
        const delayMs = retryDelayMs((error as { headers?: unknown }).headers, attempt, maxRetryDelayMs)
        const status = statusOf(error)
        options.onRetry?.({ attempt: attempt + 1, delayMs, ...(status !== undefined ? { status } : {}) })
        await abortableSleep(delayMs, guard.signal)
      }
    }
  }

  return {
    name: `openai:${model}`,
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const tools: ChatCompletionFunctionTool[] = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }))
      const body = {
        model,
        messages: toOpenAIMessages(request),
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        ...(maxCompletionTokens > 0 ? { max_completion_tokens: maxCompletionTokens } : {}),
        ...(tools.length > 0 ? { tools } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      }
      const guard = new CallGuard(request.signal, timeouts)
      /** A cancel ends quietly (the core reports it); a bound is a typed timeout. */
      const stopped = (cause: unknown): InterludeError | undefined => {
        if (guard.timedOut !== undefined) return modelError('timeout', { timeout: guard.timedOut, cause })
        return undefined
      }
      try {
        let stream: AsyncIterable<Chunk>
        try {
          stream = await open(body as never, guard)
        } catch (error) {
          if (request.signal.aborted) return
          throw stopped(error) ?? (InterludeError.isInstance(error) ? error : requestError(error))
        }
        guard.activity()
        const keys = new ToolCallKeys()
        const started = new Set<string>()
        const early = new Map<string, { id: string | undefined; args: string }>()
        let finishReason: string | undefined
        try {
          for await (const chunk of stream) {
            guard.activity()
            const usage = usageOf(chunk)
            if (usage) yield { type: 'usage', usage }
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
            if (choice.finish_reason) finishReason = choice.finish_reason
          }
        } catch (error) {
          if (request.signal.aborted) return
          throw stopped(error) ?? modelError('stream_reset', { cause: error })
        }
        if (request.signal.aborted) return
        // The SDK's iterator ends quietly when its signal aborts: a bound that ran out is still a failure.
        const timedOut = stopped(undefined)
        if (timedOut) throw timedOut
        if (finishReason === 'length') throw modelError('truncated')
        if (finishReason === 'content_filter') throw modelError('content_filter')
        if (finishReason === undefined) throw modelError('stream_reset')
      } finally {
        guard.dispose()
      }
    },
  }
}
