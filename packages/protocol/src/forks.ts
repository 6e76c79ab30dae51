/**
 * Time travel (docs/time-travel.md): a fork is a new thread that starts with a prefix of another thread's history.
 * `POST {base}/threads/:threadId/fork` makes one; the snapshot's `parent` names where it came from and
 * `GET {base}/threads/:threadId/forks` lists a thread's children.
 */

/**
 * Where a fork starts: after a message (up to and including it), or paused at a batch of interrupts. A batch is named
 * by `batchId`, the id of the run that paused with it (docs/protocol.md#batch-ids).
 */
export type ForkPoint = { readonly messageId: string } | { readonly batchId: string }

/** Body of `POST {base}/threads/:threadId/fork`. */
export interface ForkRequest {
  readonly at: ForkPoint
  /** The new thread's id (the caller's own id space); absent: the server makes one. */
  readonly threadId?: string
  /** Replaces the content of a user message of the copied history (the `at` message with `at: { messageId }`). */
  readonly edit?: { readonly messageId: string; readonly content: string }
}

/** Where a fork came from: its parent thread and the point it was forked at. */
export interface ThreadParent {
  readonly threadId: string
  readonly at: ForkPoint
}

/** `201` answer of `POST {base}/threads/:threadId/fork`. */
export interface ForkCreated {
  readonly threadId: string
  readonly parent: ThreadParent
}

/** One child in `GET {base}/threads/:threadId/forks`. */
export interface ThreadFork {
  readonly threadId: string
  readonly at: ForkPoint
  /** RFC 3339. */
  readonly createdAt: string
}

/** `GET {base}/threads/:threadId/forks`: the owner's forks of the thread, oldest first. */
export interface ThreadForkList {
  readonly items: readonly ThreadFork[]
}
