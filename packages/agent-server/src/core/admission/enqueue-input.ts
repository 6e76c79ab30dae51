import { InterludeError } from '@interlude/protocol'
import type { Message, RunAgentInput } from '@interlude/protocol'
import type { MultitaskStrategy } from '../../config/multitask.ts'
import type { AdmissionView } from '../../store/store.ts'
import { messageStart } from '../log/message-start.ts'
import type { AdmissionDeps } from './admission.ts'

/** How an input admission was asked for: the strategy for a busy thread, and whether it is a queued input starting. */
export interface AdmitOptions {
  readonly multitask?: MultitaskStrategy
  /** The run queue starts its head (`core/queue/run-queue.ts`): the queue does not hold it, the quota counted it. */
  readonly fromQueue?: boolean
}

/** An input stored in the thread's queue (docs/protocol.md#multitask): `202 { threadId, runId, queued }`. */
export interface QueuedAdmission {
  readonly kind: 'queued'
  readonly threadId: string
  readonly runId: string
  readonly position: number
  /** `interrupt`: the run to cancel now, so that this input starts next. */
  readonly interrupts: string | undefined
}

/**
 * A steer for the running run (docs/protocol.md#multitask): `202 { threadId, runId: <that run>, steered: true }`. It
 * waits in the queue until that run takes it before its next model request.
 */
export interface SteeredAdmission {
  readonly kind: 'steered'
  readonly threadId: string
  /** The run the message joins (not the input's runId). */
  readonly runId: string
}

/**
 * Where the thread cannot start `input` now (a run is active, a batch is pending, or input is queued ahead of it),
 * `enqueue`, `interrupt` and `steer` store it in the thread's queue instead of refusing it. `undefined`: refuse as
 * before (`reject`, a store without a queue, or input that is not only new user messages — results and resumes answer
 * the thread as it is and are never queued). A steer joins the running run; with no run active (a batch pending,
 * input queued ahead) it is queued input like `enqueue`'s.
 */
export async function enqueueInput(
  deps: AdmissionDeps,
  owner: string,
  input: RunAgentInput,
  view: AdmissionView,
  multitask: MultitaskStrategy,
): Promise<QueuedAdmission | SteeredAdmission | undefined> {
  const { store } = deps
  if (multitask === 'reject' || !store.enqueueInput) return undefined
  const added = input.messages.filter((m) => !view.knownMessageIds.has(m.id))
  if (added.length === 0 || !added.every((m: Message) => m.role === 'user')) return undefined
  const { threadId, runId } = input
  const running = view.openBatch === undefined ? view.thread.activeRunId : undefined
  const steer = multitask === 'steer' && running !== undefined && store.takeSteers !== undefined
  // Queued input counts as a running run for the owner's quota until it starts (docs/protocol.md#multitask); a steer
  // joins a run that counts already.
  const release = steer ? undefined : await deps.quota?.beforeStart(owner, { threadId, newThread: false })
  const queued = await store
    .enqueueInput({
      threadId,
      runId,
      ownerId: owner,
      input: JSON.stringify(input),
      front: multitask === 'interrupt',
      steer,
      now: deps.now(),
    })
    .finally(release)
  // A retry answers as the input was first stored: a steer while the run it joins is active, else its position.
  if (queued.steer && running !== undefined) return { kind: 'steered', threadId, runId: running }
  return {
    kind: 'queued',
    threadId,
    runId,
    position: queued.position,
    interrupts: multitask === 'interrupt' ? view.thread.activeRunId : undefined,
  }
}

/**
 * A steer whose user messages the thread has already (a retry after a run took it): answered again with the run that
 * took it, and nothing is written. `undefined`: not such a retry — also when its last user message was not joined as a
 * steer (an input that repeats the history and adds nothing is refused like any busy input).
 */
export async function takenSteer(
  deps: AdmissionDeps,
  input: RunAgentInput,
  view: AdmissionView,
): Promise<SteeredAdmission | undefined> {
  const users = input.messages.filter((m) => m.role === 'user')
  const last = users[users.length - 1]
  if (last === undefined || !users.every((m) => view.knownMessageIds.has(m.id))) return undefined
  const runId = await deps.store.messageRunId?.(input.threadId, last.id)
  if (runId === undefined) return undefined
  // Joined as a steer: the message has events of its own in the run that took it (its run's input has none).
  const joined = await messageStart(deps.store, input.threadId, runId, last.id)
  return joined.seq === undefined ? undefined : { kind: 'steered', threadId: input.threadId, runId }
}

/** `reject` on an idle thread whose queue still holds input: that input goes first (docs/protocol.md#multitask). */
export function queueAhead(threadId: string, queued: number): InterludeError {
  return new InterludeError('THREAD_BUSY', 'Queued input on this thread starts first.', {
    details: { threadId, queued },
  })
}
