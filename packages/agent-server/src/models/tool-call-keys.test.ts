import { describe, expect, it } from 'vitest'
import { ToolCallKeys } from './tool-call-keys.ts'

const keysOf = (deltas: readonly { id?: string; index?: number }[]): string[] => {
  const keys = new ToolCallKeys()
  return deltas.map((d) => keys.keyOf(d))
}

describe('ToolCallKeys', () => {
  it('the OpenAI shape: calls numbered by index, the id on the first delta only', () => {
    expect(keysOf([{ index: 0, id: 'a' }, { index: 0 }, { index: 1, id: 'b' }, { index: 0 }, { index: 1 }])).toEqual([
      '0',
      '0',
      '1',
      '0',
      '1',
    ])
  })

  it('no index: a new id starts a call, a delta without id continues the most recent one', () => {
    expect(keysOf([{ id: 'a' }, {}, {}, { id: 'b' }, {}])).toEqual(['0', '0', '0', '1', '1'])
  })

  it('index 0 for every call with distinct ids: the id decides; id-less deltas extend the newest call', () => {
    expect(keysOf([{ index: 0, id: 'a' }, { index: 0 }, { index: 0, id: 'b' }, { index: 0 }])).toEqual([
      '0',
      '0',
      '1',
      '1',
    ])
  })

  it('a repeated id continues its call; servers without ids still number calls by index', () => {
    expect(keysOf([{ index: 0, id: 'a' }, { index: 0, id: 'a' }, { index: 1, id: 'b' }, { id: 'a' }])).toEqual([
      '0',
      '0',
      '1',
      '0',
    ])
    expect(keysOf([{ index: 0 }, { index: 0 }, { index: 1 }, { index: 1 }])).toEqual(['0', '0', '1', '1'])
  })
})
