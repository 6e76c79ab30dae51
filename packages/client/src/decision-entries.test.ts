import type { Interrupt } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { approveAll, cancelAll, denyAll } from './decision-entries.ts'

const approval = (id: string): Interrupt => ({ id, reason: 'tool_call', toolCallId: `call_${id}` })
const question = (id: string): Interrupt => ({ id, reason: 'input_required', toolCallId: `call_${id}` })

function thrown(fn: () => unknown): InterludeError {
  try {
    fn()
  } catch (error) {
    if (InterludeError.isInstance(error)) return error
    throw error
  }
  throw new Error('did not throw')
}

describe('approveAll', () => {
  it('approves every tool approval of a batch, with an optional reason', () => {
    const batch = { interrupts: [approval('a'), approval('b')] }
    expect(approveAll(batch)).toEqual([
      { interruptId: 'a', status: 'resolved', payload: { approved: true } },
      { interruptId: 'b', status: 'resolved', payload: { approved: true } },
    ])
    expect(approveAll(batch.interrupts, { reason: 'LGTM' })[1]).toEqual({
      interruptId: 'b',
      status: 'resolved',
      payload: { approved: true, reason: 'LGTM' },
    })
  })

  it('uses a given payload instead of the default approval (edits)', () => {
    const payload = { approved: true, editedArgs: { version: 'v2', environment: 'staging' } }
    expect(approveAll([approval('a'), approval('b')], { payloads: { b: payload } })[1]).toEqual({
      interruptId: 'b',
      status: 'resolved',
      payload,
    })
  })

  it('refuses a batch with a question unless the question has a payload', () => {
    const batch = [approval('a'), question('q'), { ...question('c'), reason: 'confirmation' }]
    const error = thrown(() => approveAll(batch))
    expect(error.code).toBe('RESUME_INCOMPLETE')
    expect(error.details).toEqual({ problems: [{ kind: 'missing', interruptIds: ['q', 'c'], partial: true }] })
    expect(approveAll(batch, { payloads: { q: { environment: 'staging' }, c: { ok: true } } })).toEqual([
      { interruptId: 'a', status: 'resolved', payload: { approved: true } },
      { interruptId: 'q', status: 'resolved', payload: { environment: 'staging' } },
      { interruptId: 'c', status: 'resolved', payload: { ok: true } },
    ])
  })
})

describe('denyAll and cancelAll', () => {
  it('denies tool approvals and cancels questions (there is no "no" to a question)', () => {
    expect(denyAll([approval('a'), question('q')], 'not on a Friday')).toEqual([
      { interruptId: 'a', status: 'resolved', payload: { approved: false, reason: 'not on a Friday' } },
      { interruptId: 'q', status: 'cancelled' },
    ])
    expect(denyAll({ interrupts: [approval('a')] })).toEqual([
      { interruptId: 'a', status: 'resolved', payload: { approved: false } },
    ])
  })

  it('cancels everything', () => {
    expect(cancelAll({ interrupts: [approval('a'), question('q')] })).toEqual([
      { interruptId: 'a', status: 'cancelled' },
      { interruptId: 'q', status: 'cancelled' },
    ])
  })
})
