import { randomId } from './immutable.ts'
import type { ChatRuntimeOptions, ReconnectOptions, RetryOptions } from './types.ts'

/** Retry and reconnect back-off: 250 ms, 500 ms, 1 s, 2 s, then 4 s. */
const backoff = (attempt: number): number => Math.min(4000, 250 * 2 ** (attempt - 1))

/** Every default of `ChatRuntimeOptions` (and of the HTTP transport), written once. */
export const DEFAULTS = {
  api: '/api/agent',
  mode: 'auto',
  credentials: 'same-origin',
  tools: [],
  context: [],
  forwardedProps: {},
  throttleMs: 16,
  maxToolRoundtrips: 8,
  // Read at call time, so fake clocks installed after construction apply.
  now: (): number => Date.now(),
  generateId: randomId,
  retry: { attempts: 2, delayMs: backoff },
  reconnect: { attempts: 3, delayMs: backoff, idleTimeoutMs: 45_000 },
} as const

type Defaulted =
  'api' | 'mode' | 'credentials' | 'tools' | 'context' | 'forwardedProps' | 'throttleMs' | 'maxToolRoundtrips'

/** The options with every default applied; the runtime re-resolves them on each `updateOptions`. */
export type ResolvedOptions<TState = unknown> = Omit<ChatRuntimeOptions<TState>, Defaulted | 'retry' | 'reconnect'> &
  Required<Pick<ChatRuntimeOptions<TState>, Defaulted | 'now' | 'generateId'>> & {
    readonly retry: Required<RetryOptions>
    readonly reconnect: Required<ReconnectOptions>
  }

/**
 * Applies the defaults: a setting that is absent, `undefined` or `null` takes its default (as `??`
 * would). `initialState` is a value, not a setting: `null` stays `null`.
 */
export function resolveOptions<TState>(options: ChatRuntimeOptions<TState>): ResolvedOptions<TState> {
  const given: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(options)) if (value != null) given[key] = value
  return {
    ...DEFAULTS,
    ...given,
    initialState: options.initialState,
    retry: { ...DEFAULTS.retry, ...defined(options.retry) },
    reconnect: { ...DEFAULTS.reconnect, ...defined(options.reconnect) },
  } as ResolvedOptions<TState>
}

function defined<T extends object>(value: T | undefined): Partial<T> {
  const out: Partial<T> = {}
  for (const key in value) if (value[key] != null) out[key] = value[key]
  return out
}
