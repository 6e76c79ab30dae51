import type { Interrupt } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import {
  checkMessagesUnlocked,
  checkNoActiveRun,
  checkNotExpired,
  checkRestorable,
  checkResumable,
  checkStateUnlocked,
} from './guards.ts'
import type { CoreState, Interaction } from './reducer.ts'
import { initialState } from './reducer.ts'

const T0 = Date.parse('2030-01-01T00:00:00Z')
const approval = (id: string, expiresAt?: string): Interrupt => ({
  id,
  reason: 'tool_call',
  toolCallId: `c-${id}`,
  responseSchema: { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] },
  ...(expiresAt === undefined ? {} : { expiresAt }),
})
const batch = { id: 'b1', interrupts: [approval('i1'), approval('i2')] }
const run = (extra: Partial<Interaction> = {}): Interaction => ({
  gen: 1,
  kind: 'send',
  runId: 'r1',
  acknowledged: false,
  resumeAcknowledged: false,
  phase: 'submitted',
  connection: 'idle',
  fault: undefined,
  ...extra,
})
const state = (extra: Partial<CoreState> = {}): CoreState => ({ ...initialState('t1', [], undefined), ...extra })
const required = { revision: 3, required: true }

/** The refusal a check throws (code, message, details), or `undefined` when it passes. */
function refusal(check: () => unknown) {
  try {
    check()
  } catch (error) {
    if (!InterludeError.isInstance(error)) throw error
    return { code: error.code, message: error.message, details: error.details }
  }
  return undefined
}

describe('guards', () => {
  it('a batch is claimed from the claim until the resumed interaction settles', () => {
    const answer = { batchId: 'b1', entries: [] }
    const codeOf = (s: CoreState) => refusal(() => checkResumable(s, answer, () => T0))?.code
    expect(codeOf(state({ pending: batch }))).not.toBe('BATCH_CLAIMED')
    expect(codeOf(state({ pending: batch, run: run() }))).not.toBe('BATCH_CLAIMED')
    expect(codeOf(state({ pending: batch, run: run({ kind: 'resume' }) }))).toBe('BATCH_CLAIMED')
    // Acknowledged, and in its follow-up runs (a new run not yet acknowledged): still claimed.
    const acknowledged = run({ kind: 'resume', acknowledged: true, resumeAcknowledged: true })
    expect(codeOf(state({ run: acknowledged }))).toBe('BATCH_CLAIMED')
    expect(codeOf(state({ run: { ...acknowledged, acknowledged: false } }))).toBe('BATCH_CLAIMED')
  })

  it('locks the history: recovery first, then a pending or claimed batch, then a running turn', () => {
    expect(refusal(() => checkMessagesUnlocked(state(), 'send a message'))).toBeUndefined()
    expect(refusal(() => checkMessagesUnlocked(state({ recovery: required, pending: batch }), 'reload'))).toMatchObject(
      { code: 'RECOVERY_REQUIRED', message: 'Recovery requires a new thread or a restored conversation.' },
    )
    expect(refusal(() => checkMessagesUnlocked(state({ pending: batch, run: run() }), 'reload'))).toEqual({
      code: 'INVALID_STATE',
      message: 'Cannot reload while an interrupt batch is pending or claimed.',
      details: { reason: 'interrupts_pending' },
    })
    expect(refusal(() => checkMessagesUnlocked(state({ run: run({ kind: 'resume' }) }), 'reload'))?.details).toEqual({
      reason: 'interrupts_pending',
    })
    expect(refusal(() => checkMessagesUnlocked(state({ run: run() }), 'replace messages'))).toEqual({
      code: 'INVALID_STATE',
      message: 'Cannot replace messages while a run is in progress.',
      details: { reason: 'busy' },
    }) // A branch command in flight (docs/react-runtime.md#branches) locks it last.
    expect(refusal(() => checkMessagesUnlocked(state({ branching: 1 }), 'send a message'))).toEqual({
      code: 'INVALID_STATE',
      message: 'Cannot send a message while a branch is being opened.',
      details: { reason: 'branching' },
    })
    expect(refusal(() => checkMessagesUnlocked(state({ branching: 1, run: run() }), 'reload'))?.details).toEqual({
      reason: 'busy',
    })
  })

  it('allows setState while awaiting answers, refuses it once claimed or running', () => {
    expect(refusal(() => checkStateUnlocked(state({ pending: batch })))).toBeUndefined()
    expect(refusal(() => checkStateUnlocked(state({ recovery: required })))).toBeUndefined()
    expect(refusal(() => checkStateUnlocked(state({ run: run({ kind: 'resume' }) })))?.message).toBe(
      'Cannot set shared state while an interrupt batch is claimed.',
    )
    expect(refusal(() => checkStateUnlocked(state({ run: run() })))?.message).toBe(
      'Cannot set shared state while a run is in progress.',
    )
  })

  it('refuses restore and recover while a run is active', () => {
    expect(refusal(() => checkNoActiveRun(state({ pending: batch }), 'recover'))).toBeUndefined()
    expect(refusal(() => checkNoActiveRun(state({ run: run() }), 'recover'))).toEqual({
      code: 'INVALID_STATE',
      message: 'Cannot recover while a run is active.',
      details: { reason: 'busy' },
    })
  })

  it('an expired interrupt blocks the whole batch (now >= expiresAt), naming the expired ids', () => {
    const at = new Date(T0).toISOString()
    const interrupts = [approval('i1', at), approval('i2'), approval('i3', new Date(T0 + 1).toISOString())]
    expect(refusal(() => checkNotExpired(interrupts, T0 - 1))).toBeUndefined()
    expect(refusal(() => checkNotExpired(interrupts, T0))).toEqual({
      code: 'INTERRUPT_EXPIRED',
      message: 'The interrupt batch has expired; start a new thread to continue.',
      details: { interruptIds: ['i1'] },
    })
  })

  it('checks resume in order: recovery, claimed, stale, running, expiry, entries', () => {
    const clock = () => T0
    const entries = batch.interrupts.map((i) => ({
      interruptId: i.id,
      status: 'resolved' as const,
      payload: { approved: true },
    }))
    const answer = { batchId: 'b1', entries }
    const codeOf = (s: CoreState, options: Parameters<typeof checkResumable>[1] = answer) =>
      refusal(() => checkResumable(s, options, clock))?.code
    const claimed = run({ kind: 'resume' })
    expect(codeOf(state({ pending: batch, recovery: required, run: claimed }))).toBe('RECOVERY_REQUIRED')
    expect(codeOf(state({ pending: batch, run: claimed }), { batchId: 'other', entries })).toBe('BATCH_CLAIMED')
    expect(codeOf(state({ pending: batch }), { batchId: 'other', entries })).toBe('STALE_BATCH')
    expect(codeOf(state())).toBe('STALE_BATCH')
    expect(codeOf(state({ pending: batch, run: run() }))).toBe('INVALID_STATE')
    const expiring = { id: 'b1', interrupts: [approval('i1', new Date(T0).toISOString()), approval('i2')] }
    expect(codeOf(state({ pending: expiring }))).toBe('INTERRUPT_EXPIRED')
    expect(codeOf(state({ pending: batch }), { batchId: 'b1', entries: entries.slice(1) })).toBe('RESUME_INCOMPLETE')
    expect(checkResumable(state({ pending: batch }), answer, clock)).toEqual({ batch, entries })
  })

  it('reads the clock only once the batch is known to be answerable', () => {
    let reads = 0
    refusal(() => checkResumable(state(), { batchId: 'b1', entries: [] }, () => ++reads))
    expect(reads).toBe(0)
  })

  it('refuses a restore while busy, on a stale revision or an invalid snapshot', () => {
    const snapshot = { threadId: 't1', messages: [] }
    expect(refusal(() => checkRestorable(state(), snapshot, { expectedRevision: 0 }))).toBeUndefined()
    expect(refusal(() => checkRestorable(state({ run: run() }), snapshot, { expectedRevision: 0 }))?.details).toEqual({
      reason: 'busy',
    })
    expect(refusal(() => checkRestorable(state(), snapshot, { expectedRevision: 1 }))?.details).toEqual({
      reason: 'stale_revision',
    })
    expect(
      refusal(() => checkRestorable(state(), { ...snapshot, threadId: 't2' }, { expectedRevision: 0 })),
    ).toMatchObject({ code: 'INVALID_INPUT', details: { reason: 'invalid_snapshot' } })
  })
})
