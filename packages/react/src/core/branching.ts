import type { ForkPoint, ForkRequest, Message, ThreadFork, ThreadParent, ThreadSnapshot } from '@interlude/protocol'
import type { BranchEnv } from './branch-commands.ts'
import type { BranchPoint, ChatBranches } from './types.ts'

/**
 * The requests of the branch commands, loaded on first need (branch-support.ts; docs/react-runtime.md#branches): fork,
 * read the thread and the tree around it, then switch in one commit, and for `editMessage` / `regenerate` start the
 * run on the fork. The parent is only read: a fork is made by the server from its stored history, and the run goes
 * to the fork's id. Only type imports: whatever it needs of the eager modules comes through `BranchEnv`, so the bundler
 * makes no shared chunk (which would cost more up front than this module weighs).
 */

/**
 * The tree around `threadId` (pure): its parent's forks grouped by fork point — each point the parent first, then its
 * forks there — kept when the active thread is one of them or still shares the point's message; then its own forks.
 */
export function branchTree(
  threadId: string,
  parent: ThreadParent | undefined,
  messages: readonly Message[],
  own: readonly ThreadFork[],
  siblings: readonly ThreadFork[],
): ChatBranches {
  const shared = new Set(messages.map((m) => m.id))
  const points: BranchPoint[] = []
  const group = (origin: string, forks: readonly ThreadFork[]) => {
    const byPoint = new Map<string, { at: ForkPoint; threadIds: string[] }>()
    for (const fork of forks) {
      const key = 'messageId' in fork.at ? `m:${fork.at.messageId}` : `b:${fork.at.batchId}`
      const entry = byPoint.get(key) ?? { at: fork.at, threadIds: [origin] }
      entry.threadIds.push(fork.threadId)
      byPoint.set(key, entry)
    }
    for (const { at, threadIds } of byPoint.values()) {
      const index = threadIds.indexOf(threadId)
      // A point past the place where the active thread left its parent is not on its history.
      if (index < 0 && !('messageId' in at && shared.has(at.messageId))) continue
      points.push(Object.freeze({ at, threadIds: Object.freeze(threadIds), index: Math.max(index, 0) }))
    }
  }
  if (parent) group(parent.threadId, siblings)
  group(threadId, own)
  return Object.freeze({ threadId, parent, points: Object.freeze(points) })
}

async function forksOf(env: BranchEnv, threadId: string): Promise<readonly ThreadFork[]> {
  const items = await env.transport().forks!(threadId)
  if (!Array.isArray(items))
    throw env.fail('PROTOCOL_ERROR', 'The fork list is malformed.', { reason: 'invalid_forks' })
  return items
}

interface Read {
  readonly snapshot: ThreadSnapshot
  readonly branches: ChatBranches
}

/** A thread's snapshot and the tree around it. */
async function readBranch(env: BranchEnv, threadId: string): Promise<Read> {
  const snapshot = await env.transport().getThread(threadId)
  const { parent } = snapshot
  const [own, siblings] = await Promise.all([forksOf(env, threadId), parent ? forksOf(env, parent.threadId) : []])
  return { snapshot, branches: branchTree(threadId, parent, snapshot.messages, own, siblings) }
}

/** `loadBranches`: the tree lands in `branches` while its thread is still the active one. */
export async function loadBranches(env: BranchEnv, threadId: string): Promise<ChatBranches> {
  const { branches } = await readBranch(env, threadId)
  env.store.commit({ type: 'branches/loaded', branches })
  return branches
}

/**
 * Makes the read thread active in one commit: the thread change (which ends the command), its snapshot through the
 * restore path (a pending batch republished, a running thread re-attached) and its tree. Refused when the runtime
 * changed while it read (another thread, a run): then nothing changes.
 */
function activate(env: BranchEnv, op: number, read: Read): boolean {
  const { store } = env
  env.assertAlive()
  if (store.state.branching !== op || store.state.run)
    throw env.fail('INVALID_STATE', 'The conversation changed while the branch was read.', { reason: 'busy' })
  let attached = false
  store.transaction(() => {
    env.interactions.changeThread(read.snapshot.threadId)
    attached = env.install(read.snapshot, store.state.recovery.revision).attached
    store.dispatch({ type: 'branches/loaded', branches: read.branches })
  })
  return attached
}

/** `switchBranch`: to a thread of `branches`; resolves once it is active (a run it re-attached to goes on). */
export async function switchBranch(env: BranchEnv, op: number, threadId: string): Promise<void> {
  const s = env.store.state
  const tree = s.branches
  if (!tree) throw env.fail('INVALID_STATE', 'The branches are not loaded (loadBranches).', { reason: 'no_branches' })
  if (tree.parent?.threadId !== threadId && !tree.points.some((p) => p.threadIds.includes(threadId)))
    throw env.fail('INVALID_INPUT', 'That thread is not a branch of this one.', { threadId })
  if (threadId === s.threadId) return env.store.commit({ type: 'branch/ended', op })
  activate(env, op, await readBranch(env, threadId))
}

/** `editMessage`: fork at the user message with its new text; the fork's copy of it is the only change. */
export function editMessage(env: BranchEnv, op: number, messageId: string, text: string): Promise<void> {
  if (env.store.state.messages.find((m) => m.id === messageId)?.role !== 'user')
    throw env.fail('INVALID_INPUT', 'Only a user message of this thread can be edited.', { messageId })
  if (typeof text !== 'string' || text === '') throw env.fail('INVALID_INPUT', 'The new text must not be empty.')
  return forkAndRun(env, op, { at: { messageId }, edit: { messageId, content: text } })
}

/**
 * `regenerate`: fork at the user message the answer (default: the last) replies to — `at` includes it — so the whole
 * answer, tool calls included, is asked for again.
 */
export function regenerate(env: BranchEnv, op: number, messageId: string | undefined): Promise<void> {
  const { messages } = env.store.state
  const answer =
    messageId === undefined
      ? messages.findLastIndex((m) => m.role === 'assistant')
      : messages.findIndex((m) => m.id === messageId)
  if (messages[answer]?.role !== 'assistant')
    throw env.fail('INVALID_INPUT', 'There is no such assistant answer to regenerate.', { messageId })
  const question = messages.slice(0, answer).findLastIndex((m) => m.role === 'user')
  if (question < 0) throw env.fail('INVALID_STATE', 'The answer follows no user message.', { messageId })
  return forkAndRun(env, op, { at: { messageId: messages[question]!.id } })
}

/**
 * The fork (with an id of ours), then the run on it (`POST /runs` of the fork's history: the server answers
 * its last user message). Rejects with the fork's or the read's refusal while nothing changed locally; after the switch
 * it resolves when the run settles, like `sendMessage`.
 */
async function forkAndRun(env: BranchEnv, op: number, request: ForkRequest): Promise<void> {
  const parent = env.store.state.threadId
  const created = await env.transport().fork!(parent, { ...request, threadId: env.options().generateId() })
  if (typeof created?.threadId !== 'string')
    throw env.fail('PROTOCOL_ERROR', 'The fork answer is malformed.', { reason: 'invalid_fork' })
  const read = await readBranch(env, created.threadId)
  let run: Promise<void> = Promise.resolve()
  env.store.transaction(() => {
    const attached = activate(env, op, read)
    const s = env.store.state
    if (!attached && !s.pending) run = env.interactions.start({ kind: 'send', messages: s.messages })
  })
  return run
}
