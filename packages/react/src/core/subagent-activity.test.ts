import type { AgUiEvent } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { ev } from '../test-utils/controllable-transport.ts'
import {
  NO_SUBAGENTS,
  SUBAGENT_RUN_LIMIT,
  SUBAGENT_TEXT_LIMIT,
  subagentsByToolCall,
  withSubagentEvents,
} from './subagent-activity.ts'

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
  sub(ev.toolStart('sc-1', 'sign_off')),
  sub(ev.toolArgs('sc-1', '{"version":')),
  sub(ev.toolArgs('sc-1', '"v2.1"}')),
  sub(ev.toolEnd('sc-1')),
]

describe('withSubagentEvents', () => {
  it('folds a subagent run into one record: agent, parent tool call, text so far, tool calls, status', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, audit)
    expect(a).toEqual({
      sub_1: {
        subagentRunId: 'sub_1',
        agent: 'auditor',
        parentToolCallId: 'call-audit',
        status: 'running',
        text: 'Checking the release.',
        truncated: false,
        toolCalls: [{ toolCallId: 'sc-1', toolName: 'sign_off', args: '{"version":"v2.1"}', result: undefined }],
      },
    })
    const b = withSubagentEvents(a, [
      sub(ev.toolResult('sm-2', 'sc-1', '{"signed":true}')),
      sub(ev.textStart('sm-3')),
      sub(ev.text('sm-3', 'Signed off.')),
      sub({ type: 'STEP_FINISHED', stepName: 'x' }), // a step ending is not the run ending
    ])
    expect(b.sub_1).toMatchObject({ status: 'running', text: 'Checking the release.\n\nSigned off.' })
    expect(b.sub_1!.toolCalls[0]!.result).toBe('{"signed":true}')
    expect(withSubagentEvents(b, [sub(ev.finished('t-sub', 'r-sub'))]).sub_1!.status).toBe('finished')
    expect(withSubagentEvents(b, [sub(ev.finished('t-sub', 'r-sub', { type: 'interrupt' }))]).sub_1!.status).toBe(
      'interrupted',
    )
    expect(withSubagentEvents(b, [sub(ev.runError('boom'))]).sub_1!.status).toBe('failed')
  })

  it('is tolerant of marker names: SUBAGENT_STARTED / interlude.subagent.finished / SUBAGENT_INTERRUPTED', () => {
    const started = withSubagentEvents(NO_SUBAGENTS, [sub({ type: 'SUBAGENT_STARTED' })])
    expect(started.sub_1!.status).toBe('running')
    expect(withSubagentEvents(started, [sub({ type: 'interlude.subagent.finished' })]).sub_1!.status).toBe('finished')
    expect(withSubagentEvents(started, [sub({ type: 'SUBAGENT_INTERRUPTED' })]).sub_1!.status).toBe('interrupted')
  })

  it('keeps the identity of the whole and of untouched records; unrelated events change nothing', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, [...audit, sub(ev.runStarted('t', 'r'), 'sub_2', 'reviewer', 'call-r')])
    expect(withSubagentEvents(a, [ev.textStart('m1'), ev.text('m1', 'parent text')])).toBe(a)
    const b = withSubagentEvents(a, [sub(ev.text('sm-1', '!'), 'sub_2', 'reviewer', 'call-r')])
    expect(b).not.toBe(a)
    expect(b.sub_1).toBe(a.sub_1)
    expect(b.sub_2).not.toBe(a.sub_2)
    expect(Object.isFrozen(b)).toBe(true)
    expect(Object.isFrozen(b.sub_2)).toBe(true)
  })

  it('ignores malformed or unknown CUSTOM values without throwing', () => {
    const junk = [
      { type: 'CUSTOM', name: 'interlude.subagent', value: null },
      { type: 'CUSTOM', name: 'interlude.subagent', value: 'text' },
      { type: 'CUSTOM', name: 'interlude.subagent', value: [1, 2] },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 1, event: ev.text('m', 'x') } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: '', event: ev.text('m', 'x') } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 's', event: 'RUN_STARTED' } },
      { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 's', event: { type: 7 } } },
      { type: 'CUSTOM', name: 'interlude.subagent' },
      { type: 'CUSTOM', name: 'something.else', value: { subagentRunId: 's', event: ev.text('m', 'x') } },
    ] as AgUiEvent[]
    expect(withSubagentEvents(NO_SUBAGENTS, junk)).toBe(NO_SUBAGENTS)
    // A well-formed envelope with odd inner fields: the record exists, nothing odd lands in it.
    const odd = withSubagentEvents(NO_SUBAGENTS, [
      sub({ type: 'TEXT_MESSAGE_CONTENT', delta: 42 }, 'sub_odd', 7),
      sub({ type: 'TOOL_CALL_ARGS', toolCallId: 'nope', delta: 'x' }, 'sub_odd'),
      sub({ type: 'TOOL_CALL_START' }, 'sub_odd'),
      sub({ type: 'WHATEVER_THIS_IS' }, 'sub_odd'),
    ])
    // The first envelope's agent (7) is unusable: "subagent" until a later one names it.
    expect(withSubagentEvents(NO_SUBAGENTS, [sub({ type: 'X' }, 'sub_odd', 7)]).sub_odd!.agent).toBe('subagent')
    expect(odd.sub_odd).toMatchObject({ agent: 'auditor', text: '', toolCalls: [], status: 'running' })
  })

  it('bounds the text of a record and the number of records', () => {
    const long = 'x'.repeat(SUBAGENT_TEXT_LIMIT - 3)
    const a = withSubagentEvents(NO_SUBAGENTS, [sub(ev.text('m', long)), sub(ev.text('m', 'abcdef'))])
    expect(a.sub_1!.text).toHaveLength(SUBAGENT_TEXT_LIMIT)
    expect(a.sub_1!.truncated).toBe(true)
    const many = Array.from({ length: SUBAGENT_RUN_LIMIT + 5 }, (_, n) => sub(ev.finished('t', 'r'), `sub_${n}`))
    const b = withSubagentEvents(NO_SUBAGENTS, [sub(ev.runStarted('t', 'r'), 'live'), ...many])
    expect(Object.keys(b)).toHaveLength(SUBAGENT_RUN_LIMIT)
    expect(b.live).toBeDefined() // settled runs are dropped first
    expect(b.sub_0).toBeUndefined()
  })
})

describe('subagentsByToolCall', () => {
  it('attaches each run to its parent tool call, memoized per records object', () => {
    const a = withSubagentEvents(NO_SUBAGENTS, [
      ...audit,
      sub(ev.runStarted('t', 'r'), 'sub_2', 'auditor', 'call-audit'),
      sub(ev.runStarted('t', 'r'), 'sub_3', 'reviewer', 'call-review'),
    ])
    const map = subagentsByToolCall(a)
    expect(map.get('call-audit')!.map((s) => s.subagentRunId)).toEqual(['sub_1', 'sub_2'])
    expect(map.get('call-review')!.map((s) => s.agent)).toEqual(['reviewer'])
    expect(subagentsByToolCall(a)).toBe(map)
  })
})
