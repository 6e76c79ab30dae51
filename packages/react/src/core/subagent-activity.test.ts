import type { AgUiEvent } from '@interlude/protocol'
import { EventType } from '@interlude/protocol'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ev } from '../test-utils/controllable-transport.ts'
import { NO_SUBAGENTS, SUBAGENT_MESSAGE_LIMIT, SUBAGENT_RUN_LIMIT, withSubagentEvents } from './subagent-activity.ts'
import { subagentsByToolCall, subagentText, subagentToolCalls } from './subagent-view.ts'

const sub = (event: unknown, subagentRunId: unknown = 'sub_1', agent: unknown = 'auditor', parent = 'call-audit') =>
  ({
    type: 'CUSTOM',
    name: 'interlude.subagent',
    value: { subagentRunId, agent, parentToolCallId: parent, event },
  }) as AgUiEvent

const audit = [
  sub(ev.runStarted('t-sub', 'r-sub')),
  sub(ev.textStart('sm-1')),
  sub(ev.text('sm-1', 'Checking ')),
  sub(ev.text('sm-1', 'the release.')),
  sub(ev.textEnd('sm-1')),
  sub(ev.toolStart('sc-1', 'sign_off', 'sm-1')),
  sub(ev.toolArgs('sc-1', '{"version":')),
  sub(ev.toolArgs('sc-1', '"v2.1"}')),
  sub(ev.toolEnd('sc-1')),
]

describe('withSubagentEvents', () => {
  it('folds a subagent run into one record: agent, parent tool call, status, its own messages (text, tool calls)', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, audit)
    expect(Object.keys(a)).toEqual(['sub_1'])
    expect(a.sub_1).toMatchObject({
      subagentRunId: 'sub_1',
      agent: 'auditor',
      parentToolCallId: 'call-audit',
      status: 'running',
    })
    expect(subagentText(a.sub_1!)).toBe('Checking the release.')
    expect(subagentToolCalls(a.sub_1!)).toEqual([
      { toolCallId: 'sc-1', toolName: 'sign_off', args: '{"version":"v2.1"}', result: undefined },
    ])
    const b = withSubagentEvents(a, [
      sub(ev.toolResult('sm-2', 'sc-1', '{"signed":true}')),
      sub(ev.textStart('sm-3')),
      sub(ev.text('sm-3', 'Signed off.')),
      sub(ev.textEnd('sm-3')), // a message ending is not the run ending
      sub({ type: 'STEP_FINISHED', stepName: 'x' }), // nor is a step's
    ])
    expect(b.sub_1!.status).toBe('running')
    expect(subagentText(b.sub_1!)).toBe('Checking the release.\n\nSigned off.')
    expect(subagentToolCalls(b.sub_1!)[0]!.result).toBe('{"signed":true}')
    expect(withSubagentEvents(b, [sub(ev.finished('t-sub', 'r-sub'))]).sub_1!.status).toBe('finished')
    expect(withSubagentEvents(b, [sub(ev.finished('t-sub', 'r-sub', { type: 'interrupt' }))]).sub_1!.status).toBe(
      'interrupted',
    )
    expect(withSubagentEvents(b, [sub(ev.runError('boom'))]).sub_1!.status).toBe('failed')
  })

  it('follows only the subagent run lifecycle; other marker names change nothing', () => {
    const started = withSubagentEvents(NO_SUBAGENTS, [sub(ev.runStarted('t-sub', 'r-sub'))])
    expect(started.sub_1!.status).toBe('running')
    // Names a server might invent are not run ends: same object back.
    for (const type of ['SUBAGENT_FINISHED', 'interlude.subagent.finished', 'SUBAGENT_INTERRUPTED', 'SOMETHING_NEW'])
      expect(withSubagentEvents(started, [sub({ type })])).toBe(started)
  })

  it('keeps the identity of the whole and of untouched records; the parent’s own events change nothing', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, [...audit, sub(ev.runStarted('t', 'r'), 'sub_2', 'reviewer', 'call-r')])
    expect(withSubagentEvents(a, [ev.textStart('m1'), ev.text('m1', 'parent text'), ev.textEnd('m1')])).toBe(a)
    const b = withSubagentEvents(a, [sub(ev.textStart('r-m'), 'sub_2', 'reviewer', 'call-r')])
    expect(b).not.toBe(a)
    expect(b.sub_1).toBe(a.sub_1)
    expect(b.sub_2).not.toBe(a.sub_2)
    expect(Object.isFrozen(b)).toBe(true)
    expect(Object.isFrozen(b.sub_2)).toBe(true)
    expect(Object.isFrozen(b.sub_2!.messages)).toBe(true)
  })

  it('ignores malformed or unknown CUSTOM values and malformed inner events without throwing', () => {
    const junk = [
      { type: 'CUSTOM', name: 'interlude.subagent', value: null },
      { type: 'CUSTOM', name: 'interlude.subagent', value: 'text' },
      { type: 'CUSTOM', name: 'interlude.subagent', value: [1, 2] },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 1, event: ev.textStart('m') } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: '', event: ev.textStart('m') } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 's', event: 'RUN_STARTED' } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 's', event: { type: 7 } } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 's', event: null } },
      { type: 'CUSTOM', name: 'interlude.subagent' },
      { type: 'CUSTOM', name: 'something.else', value: { subagentRunId: 's', event: ev.textStart('m') } },
    ] as AgUiEvent[]
    expect(withSubagentEvents(NO_SUBAGENTS, junk)).toBe(NO_SUBAGENTS)
    // A well-formed envelope with odd inner events: the record exists, nothing odd lands in it.
    const odd = withSubagentEvents(NO_SUBAGENTS, [
      sub(ev.runStarted('t', 'r'), 'sub_odd', 7),
      sub({ type: 'TEXT_MESSAGE_START', messageId: 'm' }, 'sub_odd'),
      sub({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 42 }, 'sub_odd'),
      sub({ type: 'TOOL_CALL_ARGS', toolCallId: 'nope', delta: 'x' }, 'sub_odd'),
      sub({ type: 'TOOL_CALL_START' }, 'sub_odd'),
      sub({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/missing/deep', value: 1 }] }, 'sub_odd'),
      sub({ type: 'MESSAGES_SNAPSHOT', messages: [null] }, 'sub_odd'), // the assembler would throw on it
    ])
    expect(odd.sub_odd).toMatchObject({ agent: 'subagent', status: 'running' }) // 7 is not a name
    expect(subagentText(odd.sub_odd!)).toBe('')
    expect(subagentToolCalls(odd.sub_odd!)).toEqual([])
  })

  it('never throws, whatever the inner event carries (property: any known type, any field values)', () => {
    const anyValue = fc.oneof(fc.jsonValue(), fc.array(fc.record({ op: fc.string(), path: fc.string() })))
    const field = fc.constantFrom('messageId', 'toolCallId', 'delta', 'toolCallName', 'messages', 'snapshot', 'content')
    const inner = fc.record({
      type: fc.constantFrom(...Object.values(EventType), 'SUBAGENT_FINISHED', 'x'),
      fields: fc.dictionary(fc.oneof(field, fc.string()), anyValue, { maxKeys: 4 }),
    })
    fc.assert(
      fc.property(fc.array(inner, { maxLength: 12 }), (events) => {
        // Through JSON, as events arrive (no prototype-less objects, no undefined).
        const wire = events.map(({ type, fields }) =>
          JSON.parse(JSON.stringify(sub({ messageId: 'm', toolCallId: 'c', ...fields, type }))),
        ) as AgUiEvent[]
        const folded = withSubagentEvents(NO_SUBAGENTS, wire)
        for (const activity of Object.values(folded)) {
          expect(typeof subagentText(activity)).toBe('string')
          expect(Array.isArray(subagentToolCalls(activity))).toBe(true)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('bounds the messages of a run and the runs of a thread', () => {
    const chatty = Array.from({ length: SUBAGENT_MESSAGE_LIMIT + 10 }, (_, n) => sub(ev.textStart(`m${n}`)))
    expect(withSubagentEvents(NO_SUBAGENTS, chatty).sub_1!.messages).toHaveLength(SUBAGENT_MESSAGE_LIMIT)
    const many = Array.from({ length: SUBAGENT_RUN_LIMIT + 5 }, (_, n) => sub(ev.runStarted('t', 'r'), `sub_${n}`))
    const b = withSubagentEvents(NO_SUBAGENTS, many)
    expect(Object.keys(b)).toHaveLength(SUBAGENT_RUN_LIMIT)
    expect(b.sub_0).toBeUndefined() // the oldest runs are dropped first
    expect(b[`sub_${SUBAGENT_RUN_LIMIT + 4}`]).toBeDefined()
  })
})

describe('subagent selectors', () => {
  it('subagentsByToolCall attaches each run to its parent tool call, memoized per records object', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, [
      ...audit,
      sub(ev.runStarted('t', 'r'), 'sub_2', 'auditor', 'call-audit'),
      sub(ev.runStarted('t', 'r'), 'sub_3', 'reviewer', 'call-review'),
    ])
    const map = subagentsByToolCall(a)
    expect(map.get('call-audit')!.map((s) => s.subagentRunId)).toEqual(['sub_1', 'sub_2'])
    expect(map.get('call-review')!.map((s) => s.agent)).toEqual(['reviewer'])
    expect(subagentsByToolCall(a)).toBe(map)
    expect(subagentToolCalls(a.sub_1!)).toBe(subagentToolCalls(a.sub_1!))
  })

  it('reads a malformed MESSAGES_SNAPSHOT of a subagent without throwing', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, [
      sub({
        type: 'MESSAGES_SNAPSHOT',
        messages: [
          { id: 'x', role: 'assistant', content: 'From a snapshot.', toolCalls: 'not a list' },
          { id: 'y', role: 'assistant', toolCalls: [{ id: 'c', type: 'function', function: { name: 5 } }] },
        ],
      }),
    ])
    expect(subagentText(a.sub_1!)).toBe('From a snapshot.')
    expect(subagentToolCalls(a.sub_1!)).toEqual([{ toolCallId: 'c', toolName: '5', args: '', result: undefined }])
  })
})
