import { InterludeError } from '@interlude/protocol'
import type { Message, RunAgentInput } from '@interlude/protocol'
import type { MultitaskStrategy } from '../../config/multitask.ts'
import type { AdmissionView } from '../../store/store.ts'
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
 * Where the thread cannot start `input` now (a run is active, a batch is pending, or input is queued ahead of it),
 * `enqueue` and `interrupt` store it in the thread's queue instead of refusing it. `undefined`: refuse as before
 * (`reject`, a store without a queue, or input that is not only new user messages — results and resumes answer the
 * thread as it is and are never queued).
 */
export async function enqueueInput(
  deps: AdmissionDeps,
  owner: string,
  input: RunAgentInput,
  view: AdmissionView,
  multitask: MultitaskStrategy,
): Promise<QueuedAdmission | undefined> {
  const { store } = deps
  if (multitask === 'reject' || !store.enqueueInput) return undefined
  const added = input.messages.filter((m) => !view.knownMessageIds.has(m.id))
  if (added.length === 0 || !added.every((m: Message) => m.role === 'user')) return undefined
  const { threadId, runId } = input
  // Queued input counts as a running run for the owner's quota until it starts (docs/protocol.md#multitask).
  const release = await deps.quota?.beforeStart(owner, { threadId, newThread: false })
  const queued = await store
    .enqueueInput({
      threadId,
      runId,
      ownerId: owner,
      input: JSON.stringify(input),
      front: multitask === 'interrupt',
      now: deps.now(),
    })
    .finally(release)
  return {
    kind: 'queued',
    threadId,
    runId,
    position: queued.position,
    interrupts: multitask === 'interrupt' ? view.thread.activeRunId : undefined,
  }
}

/** `reject` on an idle thread whose queue still holds input: that input goes first (docs/protocol.md#multitask). */
export function queueAhead(threadId: string, queued: number): InterludeError {
  return new InterludeError('THREAD_BUSY', 'Queued input on this thread starts first.', {
    details: { threadId, queued },
  })
}
