import type { AgUiEvent } from '@interlude/protocol'
import { until } from './child-server.ts'

/** One event frame of a followed stream. */
export interface TailFrame {
  readonly id: number
  readonly event: AgUiEvent
}

/** A live SSE response read as it arrives: its frames, its comment pings, and whether it ended. */
export interface SseTail {
  readonly frames: TailFrame[]
  /** `: ping` comments received so far. */
  pings(): number
  ended(): boolean
  /** Waits (polling, no fixed sleep) until `probe` holds for what arrived. */
  waitFor(probe: (tail: SseTail) => boolean, what: string): Promise<void>
  /** Stops reading (the client leaves). */
  cancel(): Promise<void>
}

/** Reads `response`'s SSE body in the background, frame by frame (LF framing, as the server writes it). */
export function tailSse(response: Response): SseTail {
  if (!response.body) throw new Error('no body')
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const frames: TailFrame[] = []
  let pings = 0
  let ended = false
  let buffer = ''
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let end = buffer.indexOf('\n\n')
        while (end >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          end = buffer.indexOf('\n\n')
          if (block.startsWith(':')) {
            pings += 1
            continue
          }
          const id = /^id: (\d+)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (id !== undefined && data !== undefined)
            frames.push({ id: Number(id), event: JSON.parse(data) as AgUiEvent })
        }
      }
    } catch {
      // cancelled or reset: the stream is over for this reader
    } finally {
      ended = true
    }
  })()
  const tail: SseTail = {
    frames,
    pings: () => pings,
    ended: () => ended,
    waitFor: async (probe, what) => {
      await until(() => probe(tail), what)
    },
    cancel: async () => {
      await reader.cancel().catch(() => undefined)
      await pump
    },
  }
  return tail
}
