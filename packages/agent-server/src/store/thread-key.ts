/**
 * Threads are namespaced per owner (docs/decisions.md#threads-keyed-per-owner): alice's `support` and bob's `support` are two
 * threads. The store, the run manager's lease keys and the event hub's channels know a thread by its key, the owner and
 * the client's id joined by U+001F (a thread id is printable ASCII, docs/protocol.md#limits, so it never contains the
 * separator and the id is always what follows the last one). Clients only ever see their id: every output goes
 * through `clientThreadId`, which is the identity on an id that is not a key.
 */
export type ThreadKey = string

const SEPARATOR = '\u001f'

/** The key of `owner`'s thread `threadId`. */
export function threadKey(owner: string, threadId: string): ThreadKey {
  return `${owner}${SEPARATOR}${threadId}`
}

/** The client's thread id of a key (an id that is not a key is answered as it is). */
export function clientThreadId(key: ThreadKey): string {
  return key.slice(key.lastIndexOf(SEPARATOR) + 1)
}

/** A key as logs show it: `owner/threadId` (no control character in a log line). */
export function describeThread(key: ThreadKey): string {
  const at = key.lastIndexOf(SEPARATOR)
  return at < 0 ? key : `${key.slice(0, at)}/${key.slice(at + 1)}`
}

/** What a structured log line says about a thread: the client's id and, for a key, its owner. */
export function threadLogFields(key: ThreadKey): { threadId: string; owner?: string } {
  const at = key.lastIndexOf(SEPARATOR)
  return at < 0 ? { threadId: key } : { threadId: key.slice(at + 1), owner: key.slice(0, at) }
}

/** A record that names its thread (a decision record, a webhook's data) as a client sees it. */
export function withClientThreadId<T extends { readonly threadId: string }>(record: T): T {
  return { ...record, threadId: clientThreadId(record.threadId) }
}
