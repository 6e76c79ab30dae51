import { describe, expect, it } from 'vitest'
import type { Recording, RecordingFrame } from '../recording/recording-types.ts'
import { snapshotOf } from '../recording/test-fixtures.ts'
import { buildReplayIndex } from './replay-index.ts'

const batch = {
  id: 'b1',
  interrupts: [
    { id: 'i1', reason: 'tool_call', toolCallId: 'c1' },
    { id: 'i2', reason: 'tool_call', toolCallId: 'c2' },
  ],
}

const frames: RecordingFrame[] = [
  { seq: 0, t: 0, kind: 'action', name: 'send' },
  { seq: 1, t: 1, kind: 'request-start', requestId: 'r1', method: 'POST', path: '/api/agent/runs', purpose: 'run' },
  { seq: 2, t: 2, kind: 'request-response', requestId: 'r1', status: 200, ok: true, contentType: 'text/event-stream' },
  { seq: 3, t: 3, kind: 'sse-event', requestId: 'r1', sseId: '1', event: { type: 'RUN_STARTED' } },
  { seq: 4, t: 4, kind: 'sse-event', requestId: 'r1', sseId: '9', event: { type: 'RUN_FINISHED' } },
  { seq: 5, t: 4, kind: 'request-end', requestId: 'r1', outcome: 'complete', eventCount: 2 },
  { seq: 6, t: 5, kind: 'snapshot', snapshot: snapshotOf({ pendingInterrupts: batch }) },
  { seq: 7, t: 6, kind: 'form', batchId: 'b1', phase: 'draft', choices: { i1: { decision: 'approve' } } },
  {
    seq: 8,
    t: 7,
    kind: 'form',
    batchId: 'b1',
    phase: 'submit',
    choices: { i1: { decision: 'approve' }, i2: { decision: 'deny' } },
  },
  {
    seq: 9,
    t: 7,
    kind: 'snapshot',
    snapshot: snapshotOf({ pendingInterrupts: batch, isResuming: true, isLoading: true }),
  },
  { seq: 10, t: 8, kind: 'request-start', requestId: 'r2', method: 'POST', path: '/api/agent/runs', purpose: 'resume' },
  {
    seq: 11,
    t: 9,
    kind: 'request-response',
    requestId: 'r2',
    status: 409,
    ok: false,
    contentType: 'application/json',
    error: { code: 'DECISION_CONFLICT', message: 'no' },
  },
  { seq: 12, t: 9, kind: 'snapshot', snapshot: snapshotOf({ isResuming: true, isLoading: true }) },
]
const recording: Recording = {
  version: 1,
  createdAt: '2025-01-01T00:00:00.000Z',
  meta: { title: 't', app: 'a' },
  frames,
}

describe('buildReplayIndex', () => {
  const index = buildReplayIndex(recording)

  it('labels every frame and marks where a batch waits for answers', () => {
    expect(index.timeline.map((e) => e.label)).toEqual([
      'action · send',
      'POST /runs (run)',
      '→ 200',
      'RUN_STARTED #1',
      'RUN_FINISHED #9',
      'end · complete',
      'snapshot · awaiting 2 answers',
      'form · draft',
      'form · submit',
      'snapshot · resuming 2 answers',
      'POST /runs (resume)',
      '→ 409 DECISION_CONFLICT',
      'snapshot · resuming',
    ])
    expect(index.timeline.filter((e) => e.paused).map((e) => e.index)).toEqual([6])
    expect(index.pausedFrames).toEqual([6])
  })

  it('pairs the batch with the form choices captured at that moment', () => {
    expect(index.inspect(6)).toMatchObject({ batch, batchState: 'pending', form: undefined })
    expect(index.inspect(7)?.form?.choices).toEqual({ i1: { decision: 'approve' } })
    expect(index.inspect(8)?.form?.phase).toBe('submit')
  })

  it('keeps showing the answered batch and its submitted form after it left the snapshot', () => {
    const view = index.inspect(12)
    expect(view).toMatchObject({ batch, batchState: 'answered', form: { phase: 'submit' } })
  })

  it('shows the request as it stood at the selected frame', () => {
    expect(index.inspect(3)?.request).toMatchObject({
      requestId: 'r1',
      response: { status: 200 },
      end: undefined,
      eventsSoFar: 1,
    })
    expect(index.inspect(5)?.request).toMatchObject({ end: { outcome: 'complete' }, eventsSoFar: 2 })
    expect(index.inspect(10)?.request).toMatchObject({ requestId: 'r2', response: undefined })
    expect(index.inspect(12)?.request?.response?.error?.code).toBe('DECISION_CONFLICT')
    expect(index.inspect(0)?.request).toBeUndefined()
  })

  it('returns the raw frame and nothing outside the recording', () => {
    expect(index.inspect(4)?.frame).toBe(frames[4])
    expect(index.inspect(13)).toBeUndefined()
  })

  it('carries the decision records: from interlude.decision events, and from snapshots that hold them', () => {
    const decision = {
      threadId: 'thread-1',
      runId: 'run_mgr',
      interruptIds: ['i1', 'i2'],
      entries: [
        { interruptId: 'i1', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i2', status: 'resolved', payload: { approved: true } },
      ],
      decidedBy: 'mgr',
      via: 'api',
      at: '2026-11-30T10:32:00.000Z',
    }
    const later = {
      ...decision,
      runId: 'run_expiry',
      decidedBy: 'system:expiry',
      via: 'expiry',
      at: '2026-11-30T11:00:00.000Z',
    }
    const followed: RecordingFrame[] = [
      {
        seq: 0,
        t: 0,
        kind: 'request-start',
        requestId: 'f1',
        method: 'GET',
        path: '/api/agent/threads/t/events',
        purpose: 'follow',
      },
      { seq: 1, t: 1, kind: 'sse-event', requestId: 'f1', sseId: '7', event: { type: 'RUN_STARTED' } },
      {
        seq: 2,
        t: 2,
        kind: 'sse-event',
        requestId: 'f1',
        sseId: '8',
        event: { type: 'CUSTOM', name: 'interlude.decision', value: decision },
      },
      { seq: 3, t: 3, kind: 'snapshot', snapshot: snapshotOf({ decisions: [decision, later] }) },
    ]
    const replay = buildReplayIndex({ ...recording, frames: followed })
    expect(replay.inspect(1)?.decisions).toEqual([])
    expect(replay.inspect(2)?.decisions).toEqual([decision])
    expect(replay.inspect(3)?.decisions.map((d) => d.runId)).toEqual(['run_mgr', 'run_expiry'])
  })
})
