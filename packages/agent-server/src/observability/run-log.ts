import { EventType } from '@interlude/protocol'
import type { StoredEvent } from '../store/store.ts'
import type { Logger } from './logger.ts'
import { threadLogFields } from '../store/thread-key.ts'
import type { ThreadKey } from '../store/thread-key.ts'

/**
 * One line per run start and end committed in this process: `run.started`, `run.finished` (with `outcome` and, for a
 * pause, the number of `interrupts`) and `run.error` (with `code`), each with `threadId` and `runId`.
 */
export function logRunEvents(logger: Logger, key: ThreadKey, events: readonly StoredEvent[]): void {
  // The client's id and its owner, never the key's control character.
  const thread = threadLogFields(key)
  for (const e of events) {
    const { runId } = e
    if (e.type === EventType.RUN_STARTED) logger.info({ event: 'run.started', ...thread, runId }, 'run started')
    else if (e.type === EventType.RUN_FINISHED) {
      const outcome = (JSON.parse(e.json) as { outcome?: { type?: string; interrupts?: unknown[] } }).outcome
      const interrupts = outcome?.interrupts?.length
      logger.info(
        {
          event: 'run.finished',
          ...thread,
          runId,
          outcome: outcome?.type ?? 'success',
          ...(interrupts ? { interrupts } : {}),
        },
        'run finished',
      )
    } else if (e.type === EventType.RUN_ERROR) {
      const { code } = JSON.parse(e.json) as { code?: unknown }
      logger.warn({ event: 'run.error', ...thread, runId, code }, 'run ended with an error')
    }
  }
}
