import { describe, expect, it } from 'vitest'
import type { Recording } from './recording-types.ts'
import { snapshotOf } from './test-fixtures.ts'
import { checkRecording, parseRecording } from './validate-recording.ts'

const valid: Recording = {
  version: 1,
  createdAt: '2025-01-01T00:00:00.000Z',
  meta: { title: 'ok', app: '@interlude/workbench' },
  frames: [
    { seq: 0, t: 0, kind: 'action', name: 'send', detail: { text: 'deploy' } },
    {
      seq: 1,
      t: 1,
      kind: 'request-start',
      requestId: 'r1',
      method: 'POST',
      path: '/api/agent/runs',
      purpose: 'run',
      input: { messageCount: 1 },
    },
    {
      seq: 2,
      t: 5,
      kind: 'request-response',
      requestId: 'r1',
      status: 200,
      ok: true,
      contentType: 'text/event-stream',
    },
    { seq: 3, t: 6, kind: 'sse-event', requestId: 'r1', sseId: '1', event: { type: 'RUN_STARTED' } },
    { seq: 4, t: 6, kind: 'snapshot', snapshot: snapshotOf({ isLoading: true }) },
    {
      seq: 5,
      t: 9,
      kind: 'form',
      batchId: 'b1',
      phase: 'submit',
      choices: { i1: { decision: 'approve' } },
      entries: [{ interruptId: 'i1', status: 'resolved' }],
    },
    { seq: 6, t: 9, kind: 'request-end', requestId: 'r1', outcome: 'complete', eventCount: 1 },
    {
      seq: 7,
      t: 12,
      kind: 'request-response',
      requestId: 'r2',
      status: 410,
      ok: false,
      contentType: 'application/json',
      error: { code: 'INTERRUPT_EXPIRED', message: 'expired' },
    },
  ],
}

describe('checkRecording', () => {
  it('accepts a valid recording and round-trips through JSON', () => {
    expect(checkRecording(valid)).toEqual({ ok: true, recording: valid })
    expect(parseRecording(JSON.stringify(valid)).ok).toBe(true)
  })

  it('refuses other versions by name', () => {
    const result = checkRecording({ ...valid, version: 2 })
    expect(result).toEqual({
      ok: false,
      problems: ['unsupported recording version 2 (this workbench reads version 1)'],
    })
  })

  it('refuses non-JSON text and non-objects', () => {
    expect(parseRecording('{nope')).toEqual({ ok: false, problems: ['file is not JSON'] })
    expect(checkRecording([])).toEqual({ ok: false, problems: ['recording must be a JSON object'] })
  })

  it('reports each bad frame with its path', () => {
    const result = checkRecording({
      ...valid,
      frames: [
        valid.frames[0],
        { seq: 0, t: 1, kind: 'action', name: 'dup-seq' },
        { seq: 5, t: 0.5, kind: 'action', name: 'back-in-time' },
        { seq: 6, t: 2, kind: 'mystery' },
        { seq: 7, t: 3, kind: 'request-start', requestId: 'r', method: 'GET', path: '/', purpose: 'spying' },
        { seq: 8, t: 4, kind: 'snapshot', snapshot: { ...snapshotOf(), pendingInterrupts: { id: 1 } } },
        { seq: 9, t: 5, kind: 'request-end', requestId: 'r', outcome: 'complete', eventCount: -1, error: { code: 1 } },
      ],
    })
    expect(result.ok).toBe(false)
    expect(!result.ok && result.problems).toEqual([
      'frames[1].seq: must be an integer greater than the previous frame',
      'frames[2].t: must be a number ≥ 0 and ≥ the previous frame',
      'frames[3].kind: unknown frame kind "mystery"',
      'frames[4].purpose: is not a known purpose',
      'frames[5].snapshot.pendingInterrupts: must be null or { id, interrupts[] }',
      'frames[6].eventCount: must be an integer ≥ 0',
      'frames[6].error: must be { code, message, details? }',
    ])
  })

  it('refuses values that are not JSON inside frames', () => {
    const result = checkRecording({
      ...valid,
      frames: [{ seq: 0, t: 0, kind: 'sse-event', requestId: 'r', sseId: null, event: Number.NaN }],
    })
    expect(!result.ok && result.problems).toEqual(['frames[0].event: must be JSON'])
  })
})
