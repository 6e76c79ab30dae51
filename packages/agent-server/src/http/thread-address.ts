import type { Context } from 'hono'
import { InterludeError } from '@interlude/protocol'
import { threadKey } from '../core/thread-key.ts'
import type { ThreadKey } from '../core/thread-key.ts'
import type { ServerEnv } from './env.ts'

const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * Whose thread a route addresses (issue 12.7, docs/protocol.md#thread-ids): the caller's own, or with `?owner=` the
 * thread of that principal (a decider or reader reaching another principal's thread; the inbox rows and webhooks
 * name the owner). Threads are per owner, so the id alone cannot name another principal's thread.
 */
export function threadOwner(c: Context<ServerEnv>): string {
  const owner = c.req.query('owner')
  if (owner === undefined) return c.get('principal')
  if (owner.length === 0 || owner.length > 500 || CONTROL.test(owner)) {
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
