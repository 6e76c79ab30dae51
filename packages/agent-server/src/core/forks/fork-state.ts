import type { ForkStore, ThreadRecord } from '../../store/store.ts'
import { messageStart } from '../log/message-start.ts'
import type { ForkDeps } from './fork-thread.ts'

/** How many forks of forks a state is looked for through (a chain longer than this starts from the fork's state). */
const MAX_DEPTH = 32

/**
 * The thread's state right after the message at `position` (docs/time-travel.md#state): the newest `STATE_SNAPSHOT`
 * the parent logged before the first event of the message that follows it. The log is read by index and in pages of
 * one run, never whole; a thread that never changed its state starts from the agent's initial state. A message a fork
 * copied has its events in its origin's log: the state is looked for there, by the message's id.
 */
export async function stateAfter(
  deps: ForkDeps,
  forks: ForkStore,
  parent: ThreadRecord,
  position: number,
  depth = 0,
): Promise<unknown> {
  const next = await forks.getForkMessage(parent.threadId, { position: position + 1 })
  // The last message: the parent's state now (a run in progress has not committed its own state yet).
  if (!next && parent.status !== 'running') return parent.state
  // A user message begins where its run begins, unless a steer joined it to a running run (docs/protocol.md#multitask).
  const found =
    next?.runId !== undefined ? await messageStart(deps.store, parent.threadId, next.runId, next.message.id) : {}
  const beforeSeq = found.seq ?? found.runFirstSeq
  if (next && beforeSeq === undefined) {
    const origin = await originOf(deps, forks, parent, depth)
    const at = await forks.getForkMessage(parent.threadId, { position })
    const there = origin && at && (await forks.getForkMessage(origin.threadId, { messageId: at.message.id }))
    if (origin && there) return stateAfter(deps, forks, origin, there.position, depth + 1)
  }
  return snapshotIn(deps, forks, parent, beforeSeq === undefined ? {} : { beforeSeq }, depth)
}

/** The state of the pause of run `runId`: its `STATE_SNAPSHOT`, in the thread or in the fork's origins. */
export function stateOfPause(deps: ForkDeps, forks: ForkStore, thread: ThreadRecord, runId: string): Promise<unknown> {
  return snapshotIn(deps, forks, thread, { runId }, 0)
}

async function snapshotIn(
  deps: ForkDeps,
  forks: ForkStore,
  thread: ThreadRecord,
  query: { readonly beforeSeq?: number; readonly runId?: string },
  depth: number,
): Promise<unknown> {
  const json = await forks.getLastStateSnapshot(thread.threadId, query)
  if (json !== undefined) return (JSON.parse(json) as { snapshot?: unknown }).snapshot ?? null
  // A run copied by a fork logged in the origin's log.
  if (query.runId !== undefined) {
    const origin = await originOf(deps, forks, thread, depth)
    if (origin) return snapshotIn(deps, forks, origin, query, depth + 1)
  }
  return deps.initialState()
}

/** The thread a fork was made from, while the chain is not too long and the origin still exists. */
async function originOf(
  deps: ForkDeps,
  forks: ForkStore,
  thread: ThreadRecord,
  depth: number,
): Promise<ThreadRecord | undefined> {
  if (depth >= MAX_DEPTH) return undefined
  const origin = await forks.getForkOrigin(thread.threadId)
  return origin && deps.store.getThread(origin.parentThreadId)
}
