import { InterludeError } from '@interlude/protocol'
import type { RunAgentInput } from '@interlude/protocol'
import type { Store } from '../../store/store.ts'
import { describeThread } from '../../store/thread-key.ts'
import { admitRun } from '../admission/admission.ts'
import type { Admission, AdmissionDeps } from '../admission/admission.ts'
import type { RunManager } from '../runs/run-manager.ts'

export interface RunQueueOptions {
  readonly store: Store
  readonly runs: RunManager
  readonly admission: AdmissionDeps
  readonly logError: (message: string, error: unknown) => void
}

/** Refusals that mean "not yet": a run is active or a batch is pending; the next run end or sweep tries again. */
const HOLDING: ReadonlySet<string> = new Set(['THREAD_BUSY', 'INTERRUPTS_PENDING', 'INTERRUPT_EXPIRED'])

/** Queues the recovery sweep looks at per pass. */
const SWEEP_LIMIT = 100

/**
 * Starts queued input (docs/decisions.md#a-durable-run-queue). The head of a thread's queue is admitted as if it had
 * just arrived, under its own runId: the store's atomic input admission (one run per runId, a revision check) makes
 * exactly one process start it, however many try; only then is its row removed. A process that dies between the two
 * leaves a row whose run exists: the next attempt finds that run (`replay`) and only removes the row. So a queued
 * input is never lost (the row stays until its run exists) and never run twice (the run's id is the row's).
 *
 * Tried when a run of this process ends, right after an input was queued, and by the recovery sweep (a replica that
 * died, a run that ended elsewhere).
 */
export class RunQueue {
  readonly #o: RunQueueOptions
  readonly #kicks = new Map<string, Promise<void>>()
  readonly #again = new Set<string>()

  constructor(options: RunQueueOptions) {
    this.#o = options
  }

  /** Starts the thread's next queued input if the thread is free; one attempt per thread at a time in this process. */
  kick(threadId: string): Promise<void> {
    const running = this.#kicks.get(threadId)
    if (running) {
      this.#again.add(threadId)
      return running
    }
    const kicked = this.#startNext(threadId)
      .catch((error: unknown) => this.#o.logError(`queue of ${describeThread(threadId)} could not start`, error))
      .finally(() => {
        this.#kicks.delete(threadId)
        if (this.#again.delete(threadId)) void this.kick(threadId)
      })
    this.#kicks.set(threadId, kicked)
    return kicked
  }

  /** Every thread with queued input and no active run (the recovery sweep). */
  async sweep(): Promise<void> {
    const threads = (await this.#o.store.listStartableQueues?.(SWEEP_LIMIT)) ?? []
    for (const threadId of threads) await this.kick(threadId)
  }

  async #startNext(threadId: string): Promise<void> {
    const { store, runs } = this.#o
    if (!store.listQueuedInputs || !store.removeQueuedInput) return
    for (;;) {
      const [head] = await store.listQueuedInputs(threadId)
      if (!head) return
      const input = JSON.parse(head.input) as RunAgentInput
      let admitted: Admission
      try {
        admitted = await admitRun(this.#o.admission, head.ownerId, input, head.ownerId, { fromQueue: true })
      } catch (error) {
        if (InterludeError.isInstance(error) && HOLDING.has(error.code)) return
        // The input can no longer start as it is (the thread was filled, its owner removed, …): dropped, not retried
        // forever, so it cannot hold the queue behind it.
        this.#o.logError(`queued run ${describeThread(threadId)}/${head.runId} was dropped`, error)
        await store.removeQueuedInput(threadId, head.runId)
        continue
      }
      if (admitted.kind === 'start') runs.start(admitted.plan)
      const removed = await store.removeQueuedInput(threadId, head.runId)
      // Its cancel removed the row while it was being started: it stops at its first stop point.
      if (!removed && admitted.kind === 'start') runs.cancel(threadId, head.runId)
      // Started here: its end starts the next. Otherwise its run existed already (started before a crash, or by
      // another process): try the next, which waits while that run is active.
      if (admitted.kind === 'start') return
    }
  }
}
