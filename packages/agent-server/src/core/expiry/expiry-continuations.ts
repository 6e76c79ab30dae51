import type { RunManager } from '../runs/run-manager.ts'
import type { RunPlan } from '../run-plan.ts'

/**
 * The continuations a sweep round decided, started at most `limit` at a time (docs/approvals.md#deadlines).
 * Deciding is cheap and a continuation is a whole run: started all at once, thousands of continuations would take
 * the event loop from the round that decides them, and a mass expiry would be decided no faster than it is carried
 * out. Queued runs are claimed and `running` in the store; the run manager's lease renewal covers every running
 * run of this executor, so they are never taken for abandoned while they wait, and they are held (`RunManager.hold`),
 * so the renewal never takes them for strays either.
 */
export class ContinuationQueue {
  readonly #runs: Pick<RunManager, 'start' | 'whenDone' | 'hold'>
  readonly #limit: number
  readonly #queue: RunPlan[] = []
  #running = 0

  constructor(runs: Pick<RunManager, 'start' | 'whenDone' | 'hold'>, limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('maxContinuations must be a positive integer.')
    this.#runs = runs
    this.#limit = limit
  }

  /** Continuations decided but not started yet. */
  get waiting(): number {
    return this.#queue.length
  }

  /** Starts the plan when a slot is free. */
  push(plan: RunPlan): void {
    // Claimed and `running` in the store while it waits: the lease renewal keeps it, and it is not a stray.
    this.#runs.hold(plan.threadId, plan.runId)
    this.#queue.push(plan)
    this.#pump()
  }

  /** Starts the plan now, whatever is queued: somebody is waiting for this thread (first touch). */
  startNow(plan: RunPlan): void {
    this.#start(plan)
  }

  /** Starts everything queued (server shutdown: the run manager then cancels them like any run). */
  flush(): void {
    for (const plan of this.#queue.splice(0)) this.#start(plan)
  }

  #pump(): void {
    while (this.#running < this.#limit && this.#queue.length > 0) this.#start(this.#queue.shift()!)
  }

  #start(plan: RunPlan): void {
    this.#running++
    this.#runs.start(plan)
    void this.#runs.whenDone(plan.threadId, plan.runId).then(() => {
      this.#running--
      this.#pump()
    })
  }
}
