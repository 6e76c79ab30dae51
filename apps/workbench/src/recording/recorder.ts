import type {
  FrameInput,
  Json,
  Recording,
  RecordingFrame,
  RecordingMeta,
  SnapshotProjection,
} from './recording-types.ts'
import { RECORDING_VERSION } from './recording-types.ts'

export interface RecorderOptions {
  /** Monotonic clock in ms. @default performance.now */
  readonly now?: () => number
  /** Wall clock for `createdAt`. @default Date.now */
  readonly wallClock?: () => number
  /** Frames kept before the recorder stops adding (memory bound). @default 50_000 */
  readonly maxFrames?: number
}

export interface RecorderStatus {
  readonly frameCount: number
  /** True once `maxFrames` was reached; later frames were dropped. */
  readonly truncated: boolean
}

/**
 * Collects frames in arrival order. `t` comes from a monotonic clock, so frames recorded in one
 * tick keep their order and `t` never goes backwards. Subscribers are told the frame count (for
 * the toolbar) after every change.
 */
export class Recorder {
  readonly #now: () => number
  readonly #wallClock: () => number
  readonly #maxFrames: number
  readonly #listeners = new Set<() => void>()
  #frames: RecordingFrame[] = []
  #origin = 0
  #createdAt = ''
  #lastSnapshotJson: string | undefined
  #status: RecorderStatus = { frameCount: 0, truncated: false }
  #nextRequest = 1

  constructor(options: RecorderOptions = {}) {
    this.#now = options.now ?? (() => performance.now())
    this.#wallClock = options.wallClock ?? (() => Date.now())
    this.#maxFrames = options.maxFrames ?? 50_000
    this.reset()
  }

  /** Drops every frame and starts a new recording at `t = 0`. */
  reset(): void {
    this.#frames = []
    this.#origin = this.#now()
    this.#createdAt = new Date(this.#wallClock()).toISOString()
    this.#lastSnapshotJson = undefined
    this.#setStatus({ frameCount: 0, truncated: false })
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  getStatus = (): RecorderStatus => this.#status

  /** A fresh id for a recorded request (unique within this recorder). */
  nextRequestId(): string {
    return `r${this.#nextRequest++}`
  }

  add(input: FrameInput): void {
    if (this.#frames.length >= this.#maxFrames) {
      if (!this.#status.truncated) this.#setStatus({ frameCount: this.#frames.length, truncated: true })
      return
    }
    const t = Math.max(0, Math.round((this.#now() - this.#origin) * 1000) / 1000)
    const previous = this.#frames[this.#frames.length - 1]
    const frame = { ...input, seq: this.#frames.length, t: previous ? Math.max(previous.t, t) : t } as RecordingFrame
    this.#frames.push(frame)
    this.#setStatus({ frameCount: this.#frames.length, truncated: false })
  }

  /** Adds a snapshot frame unless it equals the previous recorded snapshot. */
  addSnapshot(snapshot: SnapshotProjection): void {
    const json = JSON.stringify(snapshot)
    if (json === this.#lastSnapshotJson) return
    this.#lastSnapshotJson = json
    this.add({ kind: 'snapshot', snapshot })
  }

  addAction(name: string, detail?: Json, error?: { code: string; message: string }): void {
    this.add({
      kind: 'action',
      name,
      ...(detail === undefined ? {} : { detail }),
      ...(error === undefined ? {} : { error }),
    })
  }

  get frames(): readonly RecordingFrame[] {
    return this.#frames
  }

  /** The recording so far (a copy: later frames do not change it). */
  toRecording(meta: RecordingMeta): Recording {
    return { version: RECORDING_VERSION, createdAt: this.#createdAt, meta, frames: this.#frames.slice() }
  }

  #setStatus(status: RecorderStatus): void {
    this.#status = status
    for (const listener of this.#listeners) listener()
  }
}
