import type { ServerConfig } from '../../config/server-config.ts'
import type { Store } from '../../store/store.ts'
import type { EventHub } from './event-hub.ts'

export interface LogWatcherOptions extends Pick<ServerConfig, 'pollMs' | 'logError'> {
  readonly store: Store
  readonly hub: EventHub
}

/**
 * Live tail across processes: one poll per interval for all threads that have readers in this
 * process (`pollThreads`, one round trip), waking the readers of every thread whose log head moved.
 * With PostgreSQL the NOTIFY feed wakes readers at once and this poll is the fallback; with several
 * processes on one SQLite file it is the only path. Runs of this process publish directly.
 */
export class LogWatcher {
  readonly #o: LogWatcherOptions
  readonly #heads = new Map<string, string>()
  #timer: ReturnType<typeof setInterval> | undefined
  #polling = false

  constructor(options: LogWatcherOptions) {
    this.#o = options
  }

  start(): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => void this.poll(), this.#o.pollMs)
    this.#timer.unref?.()
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }

  /** One poll (exposed for tests). */
  async poll(): Promise<void> {
    if (this.#polling) return
    const ids = this.#o.hub.threadIds()
    if (ids.length === 0) {
      this.#heads.clear()
      return
    }
    this.#polling = true
    try {
      const heads = await this.#o.store.pollThreads(ids)
      const watched = new Set(ids)
      for (const key of this.#heads.keys()) if (!watched.has(key)) this.#heads.delete(key)
      for (const head of heads) {
        const value = `${head.lastSeq}:${head.activeRunId ?? ''}`
        if (this.#heads.get(head.threadId) === value) continue
        // Also on first sight: a reader may have read the log just before this head moved. Not for a head this
        // process published itself (a local run's events reached its readers through the hub).
        this.#heads.set(head.threadId, value)
        this.#o.hub.wake(head.threadId, head.lastSeq)
      }
    } catch (error) {
      this.#o.logError('log poll failed', error)
    } finally {
      this.#polling = false
    }
  }
}
