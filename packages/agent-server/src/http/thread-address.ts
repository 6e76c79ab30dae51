import type { Context } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { threadKey } from '../store/thread-key.ts'
import type { ThreadKey } from '../store/thread-key.ts'
import type { ServerEnv } from './env.ts'

/** A control character (C0 or DEL): never part of a principal id in an address (NUL breaks PostgreSQL, U+001F keys). */
const hasControl = (value: string) => [...value].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)

/**
 * Whose thread a route addresses (docs/decisions.md#threads-keyed-per-owner, docs/protocol.md#thread-ids): the caller's own, or with `?owner=` the
 * thread of that principal (a decider or reader reaching another principal's thread; the inbox rows and webhooks
 * name the owner). Threads are per owner, so the id alone cannot name another principal's thread.
 */
export function threadOwner(c: Context<ServerEnv>): string {
  const given = c.req.queries('owner')
  // Two owners name no thread: refused rather than picking one (a proxy and the app could read different ones).
  if (given !== undefined && given.length > 1)
    throw new InterludeError('INVALID_INPUT', 'owner may be given once.', { details: { field: 'owner' } })
  const owner = given?.[0]
  if (owner === undefined) return c.get('principal')
  if (owner.length === 0 || owner.length > 500 || hasControl(owner)) {
    throw new InterludeError(
      'INVALID_INPUT',
      'owner must be a principal id (1-500 characters, no control characters).',
      {
        details: { field: 'owner' },
      },
    )
  }
  return owner
}

/** The key of the thread `threadId` (the client's id) the route addresses. */
export function addressedThread(c: Context<ServerEnv>, threadId: string): ThreadKey {
  return threadKey(threadOwner(c), threadId)
}
