import type pg from 'pg'
import type { PoolConfig } from 'pg'
import type { StoreChange } from '../store.ts'
import { quoteIdent } from './migrations.ts'
import { pgModule } from './pg-module.ts'

/**
 * LISTEN on the schema's channel with one dedicated connection, reconnecting with backoff after
 * errors. Payloads are JSON arrays: `["e", threadId, seq]` (events appended) and
 * `["c", threadId, runId]` (cancel requested). Notifications are only wake-ups: a lost one costs
 * latency (the log poll covers it), never data.
 */
export class PgChangeFeed {
  readonly #config: PoolConfig
  readonly #channel: string
  readonly #listeners = new Set<(change: StoreChange) => void>()
  #client: pg.Client | undefined
  #connecting: Promise<void> | undefined
  #retryTimer: ReturnType<typeof setTimeout> | undefined
  #backoffMs = 250
  #closed = false

  constructor(config: PoolConfig, channel: string) {
    this.#config = config
    this.#channel = channel
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener)
    void this.#connect()
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Resolves once LISTEN is active (tests). */
  async ready(): Promise<void> {
    await this.#connect()
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer)
    await this.#connecting?.catch(() => undefined)
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => undefined)
  }

  #connect(): Promise<void> {
    if (this.#closed || this.#client) return Promise.resolve()
    this.#connecting ??= (async () => {
      const client = new (pgModule().Client)(this.#config)
      client.on('error', () => this.#lost(client))
      client.on('end', () => this.#lost(client))
      client.on('notification', (message) => {
        if (message.channel !== this.#channel || message.payload === undefined) return
        const change = parseChange(message.payload)
        if (change) for (const listener of [...this.#listeners]) listener(change)
      })
      try {
        await client.connect()
        await client.query(`LISTEN ${quoteIdent(this.#channel)}`)
        if (this.#closed) {
          await client.end().catch(() => undefined)
          return
        }
        this.#client = client
        this.#backoffMs = 250
      } catch {
        await client.end().catch(() => undefined)
        this.#scheduleRetry()
      } finally {
        this.#connecting = undefined
      }
    })()
    return this.#connecting
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return
    this.#client = undefined
    void client.end().catch(() => undefined)
    this.#scheduleRetry()
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retryTimer !== undefined) return
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      void this.#connect()
    }, this.#backoffMs)
    this.#retryTimer.unref?.()
    this.#backoffMs = Math.min(this.#backoffMs * 2, 5000)
  }
}

function parseChange(payload: string): StoreChange | undefined {
  try {
    const [kind, threadId, third] = JSON.parse(payload) as [unknown, unknown, unknown]
    if (typeof threadId !== 'string') return undefined
    if (kind === 'e' && typeof third === 'number') return { kind: 'events', threadId, seq: third }
    if (kind === 'c' && typeof third === 'string') return { kind: 'cancel', threadId, runId: third }
  } catch {
    // not ours
  }
  return undefined
}
