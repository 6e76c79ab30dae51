/** Helpers shared by the agent-server benchmarks (not tests). */
import { randomUUID } from 'node:crypto'
import type { Interrupt } from '@interlude/protocol'

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

/** Reads an SSE body to the end, counting frames without building one giant string. */
export async function countFrames(response: Response): Promise<number> {
  const reader = response.body!.getReader()
  let frames = 0
  let lastWasLf = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return frames
    for (let i = 0; i < value.length; i++) {
      const lf = value[i] === 10
      if (lf && lastWasLf) frames += 1
      lastWasLf = lf
    }
  }
}

export type PostRun = (body: unknown) => Promise<Response>

export interface PausedThread {
  readonly threadId: string
  readonly interrupts: Interrupt[]
}

/** Pauses `threads` release-assistant threads at once (a batch of two interrupts each), posting as `post` does. */
export async function pauseThreads(post: PostRun, threads: number): Promise<PausedThread[]> {
  return Promise.all(
    Array.from({ length: threads }, async () => {
      const threadId = `adm-${randomUUID()}`
      const response = await post({
        threadId,
        runId: randomUUID(),
        messages: [{ id: randomUUID(), role: 'user', content: 'deploy v2.1 to production' }],
      })
      const text = await response.text()
      const last = JSON.parse(text.trim().split('\n\n').pop()!.split('data: ')[1]!) as {
        outcome?: { interrupts: Interrupt[] }
      }
      if (!last.outcome) throw new Error(`the run did not pause: ${response.status} ${text.slice(-500)}`)
      return { threadId, interrupts: last.outcome.interrupts }
    }),
  )
}

/** The server's own admission time, `Server-Timing: admission;dur=<ms>`; `undefined` when the header is absent. */
export function admissionTiming(response: Response): number | undefined {
  const timing = /admission;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '')
  return timing ? Number(timing[1]) : undefined
}

/** How long the request waited for its admission turn, `Server-Timing: turn;dur=<ms>`; 0 when absent (no wait). */
export function turnTiming(response: Response): number {
  const timing = /turn;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '')
  return timing ? Number(timing[1]) : 0
}

/**
 * One admission round: pauses `threads` release-assistant threads (a batch of two interrupts each),
 * then resumes all of them at once. Per resume: the client's time to response headers and the
 * server's own admission time (its `Server-Timing: admission;dur=…`).
 */
export async function admissionRound(
  post: PostRun,
  threads: number,
): Promise<{ elapsed: number; server: number; turn: number }[]> {
  const paused = await pauseThreads(post, threads)
  return Promise.all(
    paused.map(async ({ threadId, interrupts }) => {
      const started = performance.now()
      const response = await post({
        threadId,
        runId: randomUUID(),
        messages: [],
        resume: interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
      })
      const elapsed = performance.now() - started
      if (response.status !== 200) throw new Error(`resume refused: ${response.status} ${await response.text()}`)
      const server = admissionTiming(response)
      const turn = turnTiming(response)
      await response.arrayBuffer()
      return { elapsed, server: Number(server), turn }
    }),
  )
}
