import { InterludeError } from '@interlude/protocol'
import type { UsageLimitDetails } from '@interlude/protocol'
import type { ModelUsage } from '../../models/model.ts'
import type { Store, UsageScope } from '../../store/store.ts'

/** One model call's token counts, as the `onUsage` hook sees them (docs/protocol.md#token-usage). */
export interface UsageReport {
  readonly threadId: string
  readonly runId: string
  /** The thread's owner (whose allowance the tokens count against). */
  readonly principal: string
  /** The provider's name, e.g. `openai:gpt-4o-mini`. */
  readonly model: string
  readonly usage: ModelUsage
}

/** Token accounting of the model calls (docs/decisions.md#the-model-boundary). Caps count input + output tokens of finished and running runs. */
export interface UsageOptions {
  /** Tokens one thread may use over its life; the next model call past it fails with `USAGE_LIMIT_EXCEEDED`. */
  readonly maxTokensPerThread?: number
  /** Tokens all threads of one principal (owner) may use together. */
  readonly maxTokensPerPrincipal?: number
  /** Called after every model call that reported usage (logs, metrics). Must not throw. */
  readonly onUsage?: (report: UsageReport) => void
}

export function checkUsageOptions(options: UsageOptions | undefined, store: Store): void {
  for (const key of ['maxTokensPerThread', 'maxTokensPerPrincipal'] as const) {
    const value = options?.[key]
    if (value === undefined) continue
    if (!(Number.isSafeInteger(value) && value > 0)) throw new RangeError(`usage.${key} must be a positive integer.`)
    if (!store.sumUsage || !store.addRunUsage)
      throw new RangeError(`usage.${key} needs a store with addRunUsage and sumUsage.`)
  }
}

/**
 * Refuses the next model call once a cap is reached: `USAGE_LIMIT_EXCEEDED` (a stream code: the run
 * has started; it ends with `RUN_ERROR` and `details: { scope, limit, used }`). Checked before every
 * model call, so a run may overshoot a cap by at most one call's tokens.
 */
export async function checkUsageCaps(
  store: Store,
  scope: { readonly threadId: string; readonly principal: string },
  options: UsageOptions | undefined,
): Promise<void> {
  const sumUsage = store.sumUsage?.bind(store)
  if (!sumUsage) return // refused at startup when a cap is set (checkUsageOptions)
  const checks: [UsageLimitDetails['scope'], number | undefined, UsageScope][] = [
    ['thread', options?.maxTokensPerThread, { threadId: scope.threadId }],
    ['principal', options?.maxTokensPerPrincipal, { ownerId: scope.principal }],
  ]
  for (const [name, limit, of] of checks) {
    if (limit === undefined) continue
    const used = (await sumUsage(of)).totalTokens
    if (used >= limit) {
      const details: UsageLimitDetails = { scope: name, limit, used }
      throw new InterludeError(
        'USAGE_LIMIT_EXCEEDED',
        name === 'thread' ? 'This thread has used up its token allowance.' : 'Your token allowance is used up.',
        { details },
      )
    }
  }
}
