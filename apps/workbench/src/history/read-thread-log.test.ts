/**
 * A stored thread read back from the real agent server's log (127.0.0.1, SQLite, the scripted release assistant) into
 * a workbench recording: the frames are valid, the paused batch carries the server's batch id, the messages and state
 * the SDK assembly builds equal the server's own snapshot, a dropped read goes on after the last sequence, the frame
 * limit stops reading, and a stranger reads nothing. Nothing is mocked.
 */
import { authHeader, newThreadId, startTestServer } from '@interlude/agent-server/testing'
import type { TestServer } from '@interlude/agent-server/testing'
import type { ThreadSnapshot } from '@interlude/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SnapshotFrame } from '../recording/recording-types.ts'
import { checkRecording } from '../recording/validate-recording.ts'
import { buildReplayIndex } from '../replay/replay-index.ts'
import { createHistoryClient } from './history-client.ts'
import { LOG_PAGE_EVENTS, readThreadLog } from './read-thread-log.ts'
import { releaseTurn } from './test-threads.ts'

let server: TestServer
let threadId: string
let pausedRunId: string
let logLength: number

const client = (principal: 'alice' | 'bob', fetchImpl?: typeof fetch) =>
  createHistoryClient({
    baseUrl: server.baseUrl,
    headers: () => authHeader(principal),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  })

beforeAll(async () => {
  server = await startTestServer()
  threadId = newThreadId()
  pausedRunId = (await releaseTurn(server, threadId, 'deploy v2.1 to production', true)).pausedRunId
  // More turns make the log longer than one page of the server's reads.
  await releaseTurn(server, threadId, 'deploy v2.2 to staging', false)
  const last = await releaseTurn(server, threadId, 'deploy v2.3 to staging', false)
  logLength = Number(last.answered.ids.at(-1))
})
afterAll(async () => {
  await server.dispose()
})

async function serverSnapshot(): Promise<ThreadSnapshot> {
  const res = await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
  return (await res.json()) as ThreadSnapshot
}

describe('readThreadLog (real server)', () => {
  it('lists the principal’s threads with their titles, and none of another principal', async () => {
    const page = await client('alice').listThreads()
    expect(page.threads.find((t) => t.threadId === threadId)).toMatchObject({ title: 'deploy v2.1 to production' })
    expect((await client('bob').listThreads()).threads.map((t) => t.threadId)).not.toContain(threadId)
  })

  it('turns the whole log into a valid recording whose last snapshot is the server’s thread', async () => {
    const progress: number[] = []
    const read = await readThreadLog(client('alice'), threadId, {
      title: 'deploy',
      onProgress: (p) => progress.push(p.events),
    })
    expect(read).toMatchObject({ complete: true, truncated: false, error: undefined, events: logLength })
    expect(logLength).toBeGreaterThan(LOG_PAGE_EVENTS)
    // Applied page by page: no step takes more than a page of events.
    const steps = progress.map((n, i) => n - (progress[i - 1] ?? 0))
    expect(Math.max(...steps)).toBeLessThanOrEqual(LOG_PAGE_EVENTS)
    expect(checkRecording(read.recording)).toMatchObject({ ok: true })

    const frames = read.recording.frames
    expect(frames.filter((f) => f.kind === 'sse-event').map((f) => f.sseId)).toEqual(
      Array.from({ length: logLength }, (_, i) => String(i + 1)),
    )
    const snapshots = frames.filter((f): f is SnapshotFrame => f.kind === 'snapshot')
    const last = snapshots.at(-1)!.snapshot
    const stored = await serverSnapshot()
    expect(last.messages).toEqual(JSON.parse(JSON.stringify(stored.messages)))
    expect(last.state).toEqual(stored.state)
    expect(last).toMatchObject({ isLoading: false, pendingInterrupts: null, error: null })
  })

  it('marks both pauses, with the server’s batch id and the answers as the submitted form', async () => {
    const read = await readThreadLog(client('alice'), threadId, { title: 'deploy' })
    const index = buildReplayIndex(read.recording)
    expect(index.pausedFrames).toHaveLength(3)
    const paused = index.inspect(index.pausedFrames[0]!)!
    expect(paused.batchState).toBe('pending')
    expect(paused.batch?.id).toBe(pausedRunId)
    expect(paused.batch?.interrupts).toHaveLength(2)
    // The first run's user message is in the history by the time it pauses.
    expect(paused.snapshot?.messages[0]).toMatchObject({ role: 'user', content: 'deploy v2.1 to production' })
    const end = index.inspect(read.recording.frames.length - 1)!
    expect(end.decisions).toHaveLength(3)
    const answered = index.inspect(index.pausedFrames[1]! - 1)!
    expect(answered.batch?.id).toBe(pausedRunId)
    expect(answered.form?.phase).toBe('submit')
    expect(Object.values(answered.form!.choices)).toEqual([
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
      expect.objectContaining({ status: 'resolved', payload: { approved: true } }),
    ])
  })

  it('reads again after the last sequence when the connection drops mid-log', async () => {
    let cut = false
    const paths: string[] = []
    const dropping: typeof fetch = async (input, init) => {
      paths.push(String(input))
      const res = await fetch(input, init)
      if (cut || res.body === null) return res
      cut = true
      // The first read loses its connection after its first chunk.
      const reader = res.body.getReader()
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const chunk = await reader.read()
          if (!chunk.done) controller.enqueue(chunk.value)
          await reader.cancel()
          controller.error(new TypeError('network connection lost'))
        },
      })
      return new Response(body, { status: res.status, headers: res.headers })
    }
    const read = await readThreadLog(client('alice', dropping), threadId, { title: 'deploy' })
    expect(read).toMatchObject({ complete: true, events: logLength })
    expect(paths).toHaveLength(2)
    expect(paths[1]).toMatch(/\?after=\d+$/)
    const ends = read.recording.frames.filter((f) => f.kind === 'request-end').map((f) => f.outcome)
    expect(ends).toEqual(['network-error', 'complete'])
    expect(read.recording.frames.filter((f) => f.kind === 'sse-event')).toHaveLength(logLength)
  })

  it('stops at the frame limit and says so', async () => {
    const read = await readThreadLog(client('alice'), threadId, { title: 'deploy', maxFrames: 40 })
    expect(read).toMatchObject({ complete: false, truncated: true })
    expect(read.recording.frames.length).toBeLessThanOrEqual(40)
    expect(read.events).toBeLessThan(logLength)
  })

  it('a stranger reads nothing: THREAD_NOT_FOUND', async () => {
    const read = await readThreadLog(client('bob'), threadId, { title: 'deploy' })
    expect(read.error?.code).toBe('THREAD_NOT_FOUND')
    expect(read.events).toBe(0)
    expect(read.complete).toBe(false)
  })
})
