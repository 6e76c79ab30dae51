import { describe, expect, it } from 'vitest'
import {
  DECISION_EVENT_NAME,
  STALE_INTERRUPT_REASON,
  SYSTEM_EXPIRY_PRINCIPAL,
  WEBHOOK_EVENT_TYPES,
} from './decisions.ts'
import { DecisionRecordSchema, DecisionRequestSchema, ThreadSnapshotSchema } from './schemas.ts'

const record = {
  threadId: 't1',
  runId: 'r2',
  interruptIds: ['i1'],
  entries: [{ interruptId: 'i1', status: 'resolved', payload: { approved: true } }],
  decidedBy: 'mgr',
  via: 'api',
  at: '2026-11-30T10:32:00.000Z',
}

describe('decision shapes', () => {
  it('names the custom event and the expiry principal once', () => {
    expect(DECISION_EVENT_NAME).toBe('interlude.decision')
    expect(SYSTEM_EXPIRY_PRINCIPAL).toBe('system:expiry')
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'interrupt.opened',
      'interrupt.decided',
      'interrupt.expired',
      'interrupt.escalated',
      'interrupt.reminder',
      'run.failed',
    ])
  })

  it('validates a decision record, refusing unknown channels and loose timestamps', () => {
    expect(DecisionRecordSchema.safeParse(record).success).toBe(true)
    expect(DecisionRecordSchema.safeParse({ ...record, via: 'email' }).success).toBe(false)
    expect(DecisionRecordSchema.safeParse({ ...record, at: '2026-11-30 10:32' }).success).toBe(false)
    expect(DecisionRecordSchema.safeParse({ ...record, decidedBy: '' }).success).toBe(false)
  })

  it('a stale outcome names the approvals that went stale; other outcomes are refused', () => {
    expect(STALE_INTERRUPT_REASON).toBe('interlude:stale')
    const stale = { ...record, outcome: 'stale', staleInterruptIds: ['i1'] }
    expect(DecisionRecordSchema.safeParse(stale).success).toBe(true)
    expect(DecisionRecordSchema.safeParse({ ...stale, outcome: 'late' }).success).toBe(false)
  })

  it('validates the decisions API body strictly', () => {
    const body = { runId: 'r2', resume: record.entries }
    expect(DecisionRequestSchema.safeParse(body).success).toBe(true)
    expect(DecisionRequestSchema.safeParse({ ...body, resume: [] }).success).toBe(false)
    expect(DecisionRequestSchema.safeParse({ ...body, messages: [] }).success).toBe(false)
    expect(DecisionRequestSchema.safeParse({ resume: record.entries }).success).toBe(false)
  })

  it('carries decision records in the thread snapshot', () => {
    const snapshot = { threadId: 't1', revision: 4, status: 'idle', messages: [], state: {}, lastEventId: 9 }
    expect(ThreadSnapshotSchema.safeParse({ ...snapshot, decisions: [record] }).success).toBe(true)
    expect(ThreadSnapshotSchema.safeParse({ ...snapshot, decisions: [{ ...record, via: 'x' }] }).success).toBe(false)
  })
})
