import { describe, expect, it } from 'vitest'
import { ErrorEnvelopeSchema, RunAgentInputSchema, summarizeIssues, ThreadSnapshotSchema } from './schemas.ts'

describe('boundary schemas', () => {
  it('validates RunAgentInput with resume entries (AG-UI 1.0 shape)', () => {
    const ok = RunAgentInputSchema.safeParse({
      threadId: 't',
      runId: 'r',
      messages: [{ id: 'm1', role: 'user', content: 'deploy v2.1' }],
      tools: [],
      context: [],
      resume: [{ interruptId: 'i', status: 'resolved', payload: { approved: true } }],
    })
    expect(ok.success).toBe(true)
    const bad = RunAgentInputSchema.safeParse({ threadId: 't', runId: 5, messages: 'x' })
    expect(bad.success).toBe(false)
    if (!bad.success) {
      const issues = summarizeIssues(bad.error)
      expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['runId', 'messages']))
    }
  })

  it('validates ThreadSnapshot, including strict expiresAt', () => {
    const snapshot = {
      threadId: 't',
      revision: 3,
      status: 'interrupted',
      messages: [{ id: 'm1', role: 'user', content: 'hi' }],
      state: { deployments: [] },
      interrupts: [{ id: 'i', reason: 'tool_call', toolCallId: 'tc', expiresAt: '2026-11-30T10:00:00Z' }],
      lastEventId: 12,
    }
    expect(ThreadSnapshotSchema.safeParse(snapshot).success).toBe(true)
    const loose = { ...snapshot, interrupts: [{ id: 'i', reason: 'x', expiresAt: '2026-11-30T10:00:00' }] }
    expect(ThreadSnapshotSchema.safeParse(loose).success).toBe(false)
    expect(ThreadSnapshotSchema.safeParse({ ...snapshot, status: 'paused' }).success).toBe(false)
    expect(ThreadSnapshotSchema.safeParse({ ...snapshot, revision: -1 }).success).toBe(false)
  })

  it('validates the error envelope', () => {
    expect(ErrorEnvelopeSchema.safeParse({ error: { code: 'THREAD_BUSY', message: 'busy' } }).success).toBe(true)
    expect(ErrorEnvelopeSchema.safeParse({ error: { code: 'TEAPOT', message: 'x' } }).success).toBe(false)
  })
})
