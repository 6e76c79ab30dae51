import { describe, expect, it } from 'vitest'
import { renamedIn } from './renamed-ids.ts'

describe('renamedIn', () => {
  it('replaces whole ids only: call_1 is not touched inside call_10', () => {
    const ids = new Map([['call_1', 'call_NEW']])
    const json = JSON.stringify({ a: 'call_1', b: 'call_10', c: ['xcall_1', 'call_1x', 'call_1-2'] })
    expect(JSON.parse(renamedIn(json, ids))).toEqual({
      a: 'call_NEW',
      b: 'call_10',
      c: ['xcall_1', 'call_1x', 'call_1-2'],
    })
  })

  it('renames both of two ids where one is a prefix of the other', () => {
    const ids = new Map([
      ['call_1', 'A'],
      ['call_10', 'B'],
    ])
    const json = JSON.stringify({ first: 'call_1', second: 'call_10', text: 'call_10 then call_1' })
    expect(JSON.parse(renamedIn(json, ids))).toEqual({ first: 'A', second: 'B', text: 'B then A' })
  })

  it("renames a subagent's run id, keys and ids after a separator, and leaves other values alone", () => {
    const ids = new Map([['call_7', 'call_new']])
    const json = JSON.stringify({
      subagentRunId: 'subrun_call_7',
      metadata: { subagent: { toolCallId: 'call_7' }, key: 'thread_a:call_7', other: 'my_call_7' },
      call_7: { n: 7, ok: true, none: null },
    })
    expect(JSON.parse(renamedIn(json, ids))).toEqual({
      subagentRunId: 'subrun_call_new',
      metadata: { subagent: { toolCallId: 'call_new' }, key: 'thread_a:call_new', other: 'my_call_7' },
      call_new: { n: 7, ok: true, none: null },
    })
  })

  it('treats ids as text, not as patterns', () => {
    const ids = new Map([['call.1', 'X']])
    expect(JSON.parse(renamedIn(JSON.stringify(['call.1', 'callx1']), ids))).toEqual(['X', 'callx1'])
  })
})
