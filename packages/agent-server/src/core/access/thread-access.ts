import { InterludeError } from '@interlude/protocol'
import type { Store, ThreadRecord } from '../../store/store.ts'
import type { DecisionRights } from './decision-rights.ts'
import type { RunRecovery } from '../runs/recovery.ts'

export interface ThreadAccessDeps {
  readonly store: Pick<Store, 'getThread'>
  readonly rights: DecisionRights
  readonly recovery: Pick<RunRecovery, 'touch'>
}

/** Who a thread route serves (docs/approvals.md): its owner only, or also a principal who may decide on it. */
export type Audience = 'owner' | 'readers'

/**
 * The thread `principal` may use, after first-touch recovery of a run whose process died. Anyone else gets
 * `THREAD_NOT_FOUND`, exactly as for a thread that does not exist, and nothing is touched.
 */
export async function accessibleThread(
  deps: ThreadAccessDeps,
  threadId: string,
  principal: string,
  audience: Audience,
): Promise<ThreadRecord> {
  const thread = await deps.store.getThread(threadId)
  const allowed =
    thread !== undefined &&
    (thread.ownerId === principal || (audience === 'readers' && (await deps.rights.mayRead(principal, thread))))
  if (!allowed) throw new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')
  return deps.recovery.touch(thread)
}
