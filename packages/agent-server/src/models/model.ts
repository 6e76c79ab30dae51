import type { Context, Message } from '@interlude/protocol'
import type { JsonSchema } from '../schema/json-schema.ts'

/** A tool as the model sees it. */
export interface ModelTool {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
}

export interface ModelRequest {
  readonly systemPrompt: string | undefined
  /** The server-owned history, every tool call answered. */
  readonly messages: readonly Message[]
  readonly tools: readonly ModelTool[]
  readonly context: readonly Context[]
  readonly state: unknown
  /** Aborted when the run is cancelled or the server shuts down: stop streaming (later chunks are dropped). */
  readonly signal: AbortSignal
}

/**
 * What a provider streams. Tool calls are announced by `tool_call_start` and their argument JSON
 * arrives as fragments; the execution core turns these into AG-UI events.
 */
export type ModelChunk =
  | { readonly type: 'text'; readonly delta: string }
  | { readonly type: 'tool_call_start'; readonly id: string | undefined; readonly name: string; readonly key: string }
  | { readonly type: 'tool_call_args'; readonly key: string; readonly delta: string }
  /** Token counts of this call, when the provider reports them (may come before a failure: tokens were spent). */
  | { readonly type: 'usage'; readonly usage: ModelUsage }

/** Tokens one model call used (docs/protocol.md#token-usage). */
export interface ModelUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/** One model behind one interface: the scripted provider and the OpenAI provider implement it. */
export interface ModelProvider {
  readonly name: string
  stream(request: ModelRequest): AsyncIterable<ModelChunk>
}
