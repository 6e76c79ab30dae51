import { EventType } from '@ag-ui/core'
import { describe, expect, it } from 'vitest'
import { eventProblems, interruptProblems, isKnownEventType, KNOWN_EVENT_TYPES } from './event-shape.ts'

describe('KNOWN_EVENT_TYPES', () => {
  it('is exactly the event types of @ag-ui/core (kept as a string for the browser bundle)', () => {
    expect([...KNOWN_EVENT_TYPES].sort()).toEqual(Object.values(EventType).sort())
    for (const type of Object.values(EventType)) expect(isKnownEventType(type)).toBe(true)
    expect(isKnownEventType('NOT_AN_EVENT')).toBe(false)
  })
})

describe('eventProblems', () => {
  it('accepts well-formed events and tolerates unknown event types', () => {
    expect(eventProblems({ type: 'RUN_STARTED', threadId: 't', runId: 'r' })).toEqual([])
    expect(eventProblems({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: '' })).toEqual([])
    expect(eventProblems({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'cancelled' } })).toEqual(
      [],
    )
    expect(
      eventProblems({
        type: 'RUN_FINISHED',
        threadId: 't',
        runId: 'r',
        outcome: { type: 'success', pendingToolCallIds: ['a'] },
      }),
    ).toEqual([])
    expect(eventProblems({ type: 'SOMETHING_NEW', x: 1 })).toEqual([])
  })

  it('checks only the types it knows, without consulting the type list: names of Object members are unknown types', () => {
    for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect(eventProblems({ type }), type).toEqual([])
    // A known type without required fields passes like an unknown one.
    expect(eventProblems({ type: 'RAW' })).toEqual([])
    expect(eventProblems({ type: 'RUN_STARTED' }).map((p) => p.path)).toEqual(['threadId', 'runId'])
  })

  it.each([
    ['not an object', 'RUN_STARTED', ''],
    ['array', [], ''],
    ['no type', { threadId: 't' }, 'type'],
    ['RUN_STARTED without runId', { type: 'RUN_STARTED', threadId: 't' }, 'runId'],
    ['content without delta', { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm' }, 'delta'],
    ['RUN_ERROR without message', { type: 'RUN_ERROR', code: 'X' }, 'message'],
    [
      'unknown outcome',
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'weird' } },
      'outcome.type',
    ],
    [
      'bad pending ids',
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'success', pendingToolCallIds: [1] } },
      'outcome.pendingToolCallIds',
    ],
    [
      'empty interrupts',
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'interrupt', interrupts: [] } },
      'outcome.interrupts',
    ],
    ['snapshot without messages', { type: 'MESSAGES_SNAPSHOT' }, 'messages'],
    ['snapshot with a null message', { type: 'MESSAGES_SNAPSHOT', messages: [null] }, 'messages'],
    [
      'snapshot message without a role',
      { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'm1', role: 'user', content: 'x' }, { id: 'm2' }] },
      'messages',
    ],
    ['delta not an array', { type: 'STATE_DELTA', delta: {} }, 'delta'],
    ['result without content', { type: 'TOOL_CALL_RESULT', messageId: 'm', toolCallId: 't' }, 'content'],
  ])('flags %s', (_name, value, path) => {
    const problems = eventProblems(value)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.map((p) => p.path)).toContain(path)
  })
})

describe('interruptProblems', () => {
  it('accepts a valid batch with unknown reasons', () => {
    expect(
      interruptProblems([
        {
          id: 'a',
          reason: 'tool_call',
          toolCallId: 'tc',
          expiresAt: '2026-11-30T10:00:00Z',
          responseSchema: { type: 'object' },
        },
        { id: 'b', reason: 'interlude:custom', metadata: {} },
      ]),
    ).toEqual([])
  })

  it('accepts loose or unreadable expiresAt (read leniently; unreadable means no expiry)', () => {
    expect(
      interruptProblems([
        { id: 'a', reason: 'confirmation', expiresAt: '2026-12-31T23:59:59' },
        { id: 'b', reason: 'confirmation', expiresAt: '2026-12-31T23:59:59+0000' },
        { id: 'c', reason: 'confirmation', expiresAt: '2026-12-31 23:59:59Z' },
        { id: 'd', reason: 'confirmation', expiresAt: 'whenever' },
      ]),
    ).toEqual([])
  })

  it('flags duplicates, missing toolCallId and non-object schemas', () => {
    const problems = interruptProblems([
      { id: 'a', reason: 'tool_call' },
      { id: 'a', reason: 'confirmation', expiresAt: '2026-11-30 10:00' },
      { id: 'c', reason: 7, responseSchema: 'x', message: 1 },
    ])
    expect(problems.map((p) => p.path)).toEqual([
      'interrupts[0].toolCallId',
      'interrupts[1].id',
      'interrupts[2].reason',
      'interrupts[2].message',
      'interrupts[2].responseSchema',
    ])
  })
})
