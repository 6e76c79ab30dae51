import type { DecisionRecord } from '@interlude/protocol'
import { clientThreadId } from '../../store/thread-key.ts'
import { takeGrant } from '../tools/grants.ts'
import type { Verdict } from '../tools/tool-verdicts.ts'
import type { CallText, Turn } from './turn-state.ts'

/**
 * Bounded grants at the pause (docs/approvals.md#bounded-grants): a call that would be asked about runs instead when a
 * grant approves it. Taken after the guardrails (a call they stop takes nothing) and before the calls are recorded
 * (an approved call is recorded to run); each take writes the call's `via: "grant"` record with it.
 */
export async function grantVerdicts(
  turn: Turn,
  calls: readonly CallText[],
  verdicts: readonly Verdict[],
  /**
   * A continuation's calls (`continuation-step.ts`): a call the dead attempt already took a grant for gets that take
   * back first, whatever the grant's state now — used up by that very take, revoked or past `until` since — as the
   * take stands for the attempt that made it.
   */
  again = false,
): Promise<Verdict[]> {
  const grants = turn.deps.store.grants
  const out = [...verdicts]
  if (grants === undefined) return out
  const { threadId: threadKey, runId, principal } = turn.plan
  for (let i = 0; i < out.length; i++) {
    const verdict = out[i]!
    if (verdict.kind !== 'interrupt' || verdict.tool.grant === undefined || verdict.tool.kind === 'human') continue
    const { tool, args } = verdict
    const use = {
      tool,
      args,
      toolCallId: calls[i]!.id,
      owner: principal,
      threadId: clientThreadId(threadKey),
      threadKey,
      runId,
      now: turn.deps.now(),
    }
    const taken = again ? await grants.taken(threadKey, use.toolCallId) : undefined
    const record: DecisionRecord | undefined = taken ?? (await takeGrant(use, grants, turn.deps.ruleMakerMayDecide))
    if (record) out[i] = { kind: tool.kind === 'external' ? 'external' : 'execute', tool, args, grant: record }
  }
  return out
}
