import { describe, expect, it } from 'vitest'
import type { InterruptLike } from './answers.ts'
import { allowsEdits, answerBatch, defaultChoice, earliestExpiry, entryOf, fieldsOf, isApprovalSchema } from './answers.ts'

const approval = (allowEdits: boolean) => ({
  type: 'object',
  properties: {
    approved: { type: 'boolean' },
    ...(allowEdits ? { editedArgs: { type: 'object' } } : {}),
    reason: { type: 'string' },
  },
  required: ['approved'],
  additionalProperties: false,
})

const publish: InterruptLike = { id: 'i1', reason: 'tool_call', toolCallId: 'c1', responseSchema: approval(false), metadata: { toolName: 'publish_release', arguments: { version: 'v2.1' } } }
const deploy: InterruptLike = { id: 'i2', reason: 'tool_call', toolCallId: 'c2', responseSchema: approval(true), metadata: { toolName: 'deploy', arguments: { version: 'v2.1', environment: 'production' } } }
const ask: InterruptLike = {
  id: 'i3',
  reason: 'input_required',
  responseSchema: {
    type: 'object',
    properties: { environment: { type: 'string', enum: ['staging', 'production'] }, notes: { type: 'string' }, urgent: { type: 'boolean' }, count: { type: 'integer' } },
    required: ['environment'],
  },
}

describe('schema reading', () => {
  it('recognises approval schemas and whether edits are offered', () => {
    expect(isApprovalSchema(publish.responseSchema)).toBe(true)
    expect(isApprovalSchema(ask.responseSchema)).toBe(false)
    expect(allowsEdits(publish)).toBe(false)
    expect(allowsEdits(deploy)).toBe(true)
  })

  it('lists fields with kinds, options and required flags', () => {
    expect(fieldsOf(ask.responseSchema)).toEqual([
      { name: 'environment', kind: 'enum', options: ['staging', 'production'], required: true },
      { name: 'notes', kind: 'string', required: false },
      { name: 'urgent', kind: 'boolean', required: false },
      { name: 'count', kind: 'integer', required: false },
    ])
    expect(defaultChoice(ask)).toEqual({ decision: 'answer', values: { urgent: false } })
    expect(defaultChoice(publish)).toEqual({})
  })
})

describe('entries', () => {
  it('turns approve, deny (with reason), edit and cancel into resume entries', () => {
    expect(entryOf(publish, { decision: 'approve' })).toEqual({ ok: true, entry: { interruptId: 'i1', status: 'resolved', payload: { approved: true } } })
    expect(entryOf(publish, { decision: 'deny', reason: ' not today ' })).toEqual({ ok: true, entry: { interruptId: 'i1', status: 'resolved', payload: { approved: false, reason: 'not today' } } })
    expect(entryOf(deploy, { decision: 'edit', editedArgs: '{"version":"v2.1","environment":"staging"}' })).toEqual({
      ok: true,
      entry: { interruptId: 'i2', status: 'resolved', payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging' } } },
    })
    expect(entryOf(deploy, { decision: 'cancel', reason: 'ignored' })).toEqual({ ok: true, entry: { interruptId: 'i2', status: 'cancelled' } })
  })

  it('refuses incomplete or malformed answers with a reason', () => {
    expect(entryOf(publish, undefined)).toEqual({ ok: false, problem: 'Choose an answer.' })
    expect(entryOf(deploy, { decision: 'edit', editedArgs: '{oops' })).toEqual({ ok: false, problem: 'Edited arguments must be JSON.' })
    expect(entryOf(deploy, { decision: 'edit', editedArgs: '[1]' })).toEqual({ ok: false, problem: 'Edited arguments must be a JSON object.' })
    expect(entryOf(ask, { decision: 'answer', values: {} })).toEqual({ ok: false, problem: 'environment is required.' })
    expect(entryOf(ask, { decision: 'answer', values: { environment: 'staging', count: '1.5' } })).toEqual({ ok: false, problem: 'count must be a integer.' })
  })

  it('builds typed payloads from field values', () => {
    expect(entryOf(ask, { decision: 'answer', values: { environment: 'production', notes: '  ', urgent: true, count: '3' } })).toEqual({
      ok: true,
      entry: { interruptId: 'i3', status: 'resolved', payload: { environment: 'production', urgent: true, count: 3 } },
    })
  })

  it('answers the whole batch or reports every missing answer', () => {
    expect(answerBatch([publish, deploy], { i1: { decision: 'approve' } })).toEqual({ ok: false, problems: { i2: 'Choose an answer.' } })
    const all = answerBatch([publish, deploy], { i1: { decision: 'deny' }, i2: { decision: 'cancel' } })
    expect(all.ok && all.entries.map((e) => e.status)).toEqual(['resolved', 'cancelled'])
  })

  it('finds the earliest expiry', () => {
    expect(earliestExpiry([publish])).toBeUndefined()
    expect(earliestExpiry([{ ...publish, expiresAt: '2030-01-01T00:00:10Z' }, { ...deploy, expiresAt: '2030-01-01T00:00:05Z' }])).toBe(Date.parse('2030-01-01T00:00:05Z'))
  })
})
