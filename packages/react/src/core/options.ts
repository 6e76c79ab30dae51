import type { AgUiEvent, Context, InterludeError } from '@interlude/protocol'
import { randomId } from './immutable.ts'
import type { Transport } from './transport.ts'
import type { BrowserTool, ChatRuntimeOptions, EventMeta, FinishInfo } from './types.ts'

/** Retry and reconnect back-off: 250 ms, 500 ms, 1 s, 2 s, then 4 s. */
const backoff = (attempt: number): number => Math.min(4000, 250 * 2 ** (attempt - 1))

/** Every default of `ChatRuntimeOptions` (and of the HTTP transport), written once. */
export const DEFAULTS = {
  api: '/api/agent',
  credentials: 'same-origin',
  retryAttempts: 2,
  reconnectAttempts: 3,
  delayMs: backoff,
  idleTimeoutMs: 45_000,
  throttleMs: 16,
  maxToolRoundtrips: 8,
  // Read at call time, so fake clocks installed after construction apply.
  now: (): number => Date.now(),
  generateId: randomId,
} as const satisfies Record<string, unknown>

/** The options with every default applied; the runtime re-resolves them on each `updateOptions`. */
export interface ResolvedOptions<TState = unknown> {
  readonly api: string
  readonly headers: ChatRuntimeOptions['headers']
  readonly credentials: RequestCredentials
  /** `undefined`: `globalThis.fetch`, read at call time (SSR-safe). */
  readonly fetch: typeof fetch | undefined
  readonly transport: Transport | undefined
  readonly initialState: TState | undefined
  readonly tools: readonly BrowserTool[]
  readonly context: readonly Context[]
  readonly forwardedProps: Readonly<Record<string, unknown>>
  readonly retry: { readonly attempts: number; readonly delayMs: (attempt: number) => number }
  readonly reconnect: {
    readonly attempts: number
    readonly delayMs: (attempt: number) => number
    readonly idleTimeoutMs: number
  }
  readonly throttleMs: number
  readonly maxToolRoundtrips: number
  readonly now: () => number
  readonly generateId: () => string
  readonly onEvent: ((event: AgUiEvent, meta: EventMeta) => void) | undefined
  readonly onFinish: ((info: FinishInfo) => void) | undefined
  readonly onError: ((error: InterludeError) => void) | undefined
}

export function resolveOptions<TState>(options: ChatRuntimeOptions<TState>): ResolvedOptions<TState> {
  return {
    api: options.api ?? DEFAULTS.api,
    headers: options.headers,
    credentials: options.credentials ?? DEFAULTS.credentials,
    fetch: options.fetch,
    transport: options.transport,
    initialState: options.initialState,
    tools: options.tools ?? [],
    context: options.context ?? [],
    forwardedProps: options.forwardedProps ?? {},
    retry: {
      attempts: options.retry?.attempts ?? DEFAULTS.retryAttempts,
      delayMs: options.retry?.delayMs ?? DEFAULTS.delayMs,
    },
    reconnect: {
      attempts: options.reconnect?.attempts ?? DEFAULTS.reconnectAttempts,
      delayMs: options.reconnect?.delayMs ?? DEFAULTS.delayMs,
      idleTimeoutMs: options.reconnect?.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
    },
    throttleMs: options.throttleMs ?? DEFAULTS.throttleMs,
    maxToolRoundtrips: options.maxToolRoundtrips ?? DEFAULTS.maxToolRoundtrips,
    now: options.now ?? DEFAULTS.now,
    generateId: options.generateId ?? DEFAULTS.generateId,
    onEvent: options.onEvent,
    onFinish: options.onFinish,
    onError: options.onError,
  }
}
