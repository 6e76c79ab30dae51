import fs from 'node:fs'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * WAL checkpoints off the request path (docs/decisions.md#stores). SQLite's automatic
 * checkpoint runs inside the commit that crosses its threshold: better-sqlite3 is synchronous, so copying the WAL
 * into the database and syncing both stalled the event loop — every request in flight — for 10–25 ms every ~4 MB of
 * writes. The store's connection now checkpoints only as a backstop (`BACKSTOP_PAGES`), and a worker thread with a
 * connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs` once the WAL has reached
 * `thresholdBytes` (a passive checkpoint never waits for readers or writers, and the writers reuse a WAL whose frames
 * are all checkpointed). A store whose WAL never gets that large never starts the worker.
 */
export const BACKSTOP_PAGES = 16_384

export interface WalCheckpointerOptions {
  /** @default 250 */
  readonly intervalMs?: number
  /** @default 4 MiB */
  readonly thresholdBytes?: number
}

/** The worker: CommonJS by `eval`, so it runs the same from the sources and from the built package. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file)
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {
    // Busy (another process checkpoints) or failing: the next tick tries again, and the backstop still holds.
  }
  parentPort.postMessage('done')
})
`

export class WalCheckpointer {
  readonly #file: string
  readonly #threshold: number
  readonly #timer: NodeJS.Timeout
  #worker: Worker | undefined
  #exited: Promise<void> = Promise.resolve()
  #busy = false
  #closed = false

  constructor(file: string, options: WalCheckpointerOptions = {}) {
    this.#file = file
    this.#threshold = options.thresholdBytes ?? 4 * 1024 * 1024
    this.#timer = setInterval(() => this.#tick(), options.intervalMs ?? 250)
    this.#timer.unref()
  }

  /** Whether the worker has started (tests). */
  get started(): boolean {
    return this.#worker !== undefined
  }

  #tick(): void {
    if (this.#busy || this.#closed) return
    if (this.#worker === undefined) {
      let size = 0
      try {
        size = fs.statSync(`${this.#file}-wal`).size
      } catch {
        return // no WAL yet
      }
      if (size < this.#threshold) return
      this.#worker = this.#start()
    }
    this.#busy = true
    this.#worker.postMessage('checkpoint')
  }

  #start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3')
    const worker = new Worker(WORKER, { eval: true, workerData: { driver, file: this.#file } })
    this.#exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    worker.unref()
    worker.on('message', () => {
      this.#busy = false
    })
    // A worker that cannot run (the file is gone, the driver fails) leaves the backstop: the store goes on as before.
    worker.on('error', () => {
      this.#busy = true
    })
    return worker
  }

  /** Stops the timer and closes the worker's connection (it then exits). */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#timer)
    const worker = this.#worker
    if (worker === undefined) return
    worker.postMessage('close')
    const timeout = setTimeout(() => void worker.terminate(), 2_000)
    await this.#exited
    clearTimeout(timeout)
  }
}
