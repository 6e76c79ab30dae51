import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type { ForkCreated, ForkRequest, Message } from '@interlude/protocol'
import type { Limits } from '../../config/limits.ts'
import type { ForkStore, NewFork, Store, ThreadRecord } from '../../store/store.ts'
import { clientThreadId, threadKey } from '../../store/thread-key.ts'
import { toolResult } from '../ev.ts'
import { batchFork } from './fork-batch.ts'
import { stateAfter } from './fork-state.ts'

export interface ForkDeps {
  readonly store: Store
  readonly now: () => number
  /** The agent's state of a new thread (a fork before any state change starts with it). */
  readonly initialState: () => unknown
  /** An edited message is a new message: bounded like one, and the fork by the thread cap (docs/protocol.md#limits). */
  readonly limits: Pick<Limits, 'maxMessageBytes' | 'threadMaxBytes'>
}

/** What a fork writes besides its identity (`NewFork` without thread ids, `at` and time). */
export type ForkPlan = Omit<NewFork, 'threadId' | 'ownerId' | 'parentThreadId' | 'at' | 'now' | 'title'>

/** The result a fork gives a call it settles as cancelled (asked before the fork point, answered after it). */
export const FORKED_RESULT = {
  status: 'cancelled',
  message: 'The thread was forked before this call had a result; it never runs in the fork.',
} as const

/** The store's forks, or 404 for a host store without them (the route does not exist there). */
export function forksOf(store: Store): ForkStore {
  if (!store.forks) throw new InterludeError('NOT_FOUND', 'This server does not keep thread forks.')
  return store.forks
}

/** The stored result of a call a fork settles as cancelled (its tool message's content). */
export function forkedResultText(): string {
  return JSON.stringify(FORKED_RESULT)
}

const invalid = (field: string, message: string) => new InterludeError('INVALID_INPUT', message, { details: { field } })

/**
 * Forks `parent` (docs/time-travel.md): a new thread of the same owner with the parent's history up to `request.at`.
 * Nothing of the parent is written; every copied call is settled (it never runs again, in the fork or the parent); a
 * fork at a batch pauses at the same question with new interrupt ids and a fresh deadline. `THREAD_EXISTS` when the
 * caller has a thread with the requested id already.
 */
export async function forkThread(deps: ForkDeps, parent: ThreadRecord, request: ForkRequest): Promise<ForkCreated> {
  const forks = forksOf(deps.store)
  const threadId = request.threadId ?? `thread_${randomUUID()}`
  const key = threadKey(parent.ownerId, threadId)
  if (request.edit !== undefined && !('messageId' in request.at && request.edit.messageId === request.at.messageId))
    throw invalid('edit.messageId', 'edit.messageId must be the message the fork is made at (at.messageId).')
  const now = deps.now()
  const plan =
    'messageId' in request.at
      ? await messageFork(deps, forks, parent, request.at.messageId, request.edit)
      : await batchFork(deps, forks, parent, request.at.batchId, now)
  const created = await forks.createFork({
    ...plan,
    threadId: key,
    ownerId: parent.ownerId,
    parentThreadId: parent.threadId,
    at: request.at,
    title: parent.title,
    now,
  })
  if (!created) throw new InterludeError('THREAD_EXISTS', 'A thread with this id exists already.')
  return { threadId, parent: { threadId: clientThreadId(parent.threadId), at: request.at } }
}

/** A fork after a message (up to and including it), optionally with that user message's content replaced. */
async function messageFork(
  deps: ForkDeps,
  forks: ForkStore,
  parent: ThreadRecord,
  messageId: string,
  edit: ForkRequest['edit'],
): Promise<ForkPlan> {
  const at = await forks.getForkMessage(parent.threadId, { messageId })
  if (!at) throw invalid('at.messageId', 'The thread has no message with this id.')
  const replaced: Message[] = []
  if (edit !== undefined) {
    if (at.message.role !== 'user') throw invalid('edit.messageId', 'Only a user message can be edited.')
    const edited = { ...at.message, content: edit.content } as Message
    checkEditSize(deps.limits, parent, at.message, edited)
    replaced.push(edited)
  }
  const state = await stateAfter(deps, forks, parent, at.position)
  const open = await forks.listUnansweredCalls(parent.threadId, at.position)
  const appended = open.map((call) => toolResult(call.toolCallId, FORKED_RESULT).message)
  return {
    lastPosition: at.position,
    replaced,
    appended,
    skipCallIds: [],
    calls: [],
    cancelled: { toolCallIds: open.map((c) => c.toolCallId), result: forkedResultText() },
    checkpoints: {},
    stateJson: JSON.stringify(state ?? null),
  }
}

/**
 * The edited message within `maxMessageBytes`, and the fork within the thread cap: what the edit adds is counted on
 * top of the parent's totals (the fork's prefix is never larger), so the check costs no read.
 */
function checkEditSize(limits: ForkDeps['limits'], parent: ThreadRecord, original: Message, edited: Message): void {
  const bytes = Buffer.byteLength(JSON.stringify(edited), 'utf8')
  if (bytes > limits.maxMessageBytes) {
    throw new InterludeError('PAYLOAD_TOO_LARGE', `A new message is larger than ${limits.maxMessageBytes} bytes.`, {
      details: { limit: 'maxMessageBytes', max: limits.maxMessageBytes, actual: bytes, messageId: edited.id },
    })
  }
  const growth = bytes - Buffer.byteLength(JSON.stringify(original), 'utf8')
  if (growth > 0 && parent.messageBytes + growth > limits.threadMaxBytes) {
    throw new InterludeError('THREAD_TOO_LARGE', 'The edited fork would be larger than the thread cap.', {
      details: { maxBytes: limits.threadMaxBytes, bytes: parent.messageBytes + growth },
    })
  }
}
