import { InterludeError } from '@interlude/protocol'
import type { UsageLimitDetails } from '@interlude/protocol'
import type { UsageOptions } from '../../config/server-options.ts'
import type { Store, UsageScope } from '../../store/store.ts'

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
