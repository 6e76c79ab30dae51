import { describe, expect, it } from 'vitest'
import { Recorder } from './recorder.ts'
import { snapshotOf } from './test-fixtures.ts'
import { checkRecording } from './validate-recording.ts'

function clock(...times: number[]) {
  let i = 0
  return () => times[Math.min(i++, times.length - 1)]!
}

describe('Recorder', () => {
  it('numbers frames in order and stamps t from the monotonic clock', () => {
    const recorder = new Recorder({ now: clock(100, 100.5, 103, 110), wallClock: () => Date.UTC(2025, 0, 1) })
    recorder.addAction('send', { text: 'deploy v2.1' })
    recorder.add({ kind: 'request-start', requestId: 'r1', method: 'POST', path: '/api/agent/runs', purpose: 'run' })
    recorder.add({
      kind: 'sse-event',
      requestId: 'r1',
      sseId: '1',
      event: { type: 'RUN_STARTED', threadId: 't', runId: 'x' },
    })
    const recording = recorder.toRecording({ title: 'test', app: 'workbench' })
    expect(recording.createdAt).toBe('2025-01-01T00:00:00.000Z')
    expect(recording.frames.map((f) => [f.seq, f.t, f.kind])).toEqual([
      [0, 0.5, 'action'],
      [1, 3, 'request-start'],
      [2, 10, 'sse-event'],
    ])
    expect(checkRecording(recording)).toEqual({ ok: true, recording })
  })

  it('never lets t go backwards even if the clock does', () => {
    const recorder = new Recorder({ now: clock(0, 50, 20) })
    recorder.addAction('a')
    recorder.addAction('b')
    expect(recorder.frames.map((f) => f.t)).toEqual([50, 50])
  })

  it('skips a snapshot equal to the previous one', () => {
    const recorder = new Recorder({ now: () => 0 })
    recorder.addSnapshot(snapshotOf())
    recorder.addSnapshot(snapshotOf())
    recorder.addSnapshot(snapshotOf({ isLoading: true }))
    recorder.addSnapshot(snapshotOf())
    expect(recorder.frames.map((f) => f.kind === 'snapshot' && f.snapshot.isLoading)).toEqual([false, true, false])
  })

  it('notifies subscribers with the frame count and stops at maxFrames', () => {
    const recorder = new Recorder({ now: () => 0, maxFrames: 2 })
    const counts: number[] = []
    const unsubscribe = recorder.subscribe(() => counts.push(recorder.getStatus().frameCount))
    recorder.addAction('a')
    recorder.addAction('b')
    recorder.addAction('c')
    unsubscribe()
    recorder.addAction('d')
    expect(counts).toEqual([1, 2, 2])
    expect(recorder.getStatus()).toEqual({ frameCount: 2, truncated: true })
  })

  it('keeps an exported recording unchanged by later frames and starts over on reset', () => {
    const recorder = new Recorder({ now: () => 0 })
    recorder.addAction('a')
    const recording = recorder.toRecording({ title: 't', app: 'a' })
    recorder.addAction('b')
    expect(recording.frames).toHaveLength(1)
    recorder.reset()
    expect(recorder.frames).toHaveLength(0)
    expect(recorder.getStatus().frameCount).toBe(0)
  })
})
