/** Thrown by fenced writes of a run that is no longer the thread's active run. */
export class RunNotActiveError extends Error {
  constructor(
    readonly threadId: string,
    readonly runId: string,
  ) {
    super(`Run ${runId} is no longer active on thread ${threadId}.`)
    this.name = 'RunNotActiveError'
  }
}
