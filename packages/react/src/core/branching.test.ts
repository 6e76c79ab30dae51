import type { Message, ThreadFork } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { branchTree } from './branching.ts'
import { initialState, reduce } from './reducer.ts'

const user = (id: string): Message => ({ id, role: 'user', content: id })
const fork = (threadId: string, messageId: string): ThreadFork => ({
  threadId,
  at: { messageId },
  createdAt: '2026-12-02T10:00:00Z',
})

describe('branchTree', () => {
  it('a thread that is no fork: one point per fork point of its own, itself first', () => {
    const tree = branchTree(
      'root',
      undefined,
      [user('m1'), user('m2')],
      [fork('a', 'm1'), fork('b', 'm2'), fork('c', 'm1')],
      [],
    )
    expect(tree).toEqual({
      threadId: 'root',
      parent: undefined,
      points: [
        { at: { messageId: 'm1' }, threadIds: ['root', 'a', 'c'], index: 0 },
        { at: { messageId: 'm2' }, threadIds: ['root', 'b'], index: 0 },
      ],
    })
    expect(Object.isFrozen(tree.points[0]!.threadIds)).toBe(true)
  })

  it('a fork: its siblings at its point, points of the parent it still shares, not those past where it left', () => {
    const parent = { threadId: 'root', at: { messageId: 'm3' } }
    const siblings = [fork('early', 'm1'), fork('me', 'm3'), fork('late', 'm5'), fork('twin', 'm3')]
    const batch: ThreadFork = { threadId: 'whatif', at: { batchId: 'run-9' }, createdAt: '2026-12-02T10:00:00Z' }
    const tree = branchTree(
      'me',
      parent,
      [user('m1'), user('m2'), user('m3')],
      [fork('child', 'm2')],
      [...siblings, batch],
    )
    expect(tree.points).toEqual([
      { at: { messageId: 'm1' }, threadIds: ['root', 'early'], index: 0 },
      { at: { messageId: 'm3' }, threadIds: ['root', 'me', 'twin'], index: 1 },
      { at: { messageId: 'm2' }, threadIds: ['me', 'child'], index: 0 },
    ])
    expect(tree.parent).toEqual(parent)
  })

  it('a fork at a batch lists the batch point', () => {
    const parent = { threadId: 'root', at: { batchId: 'run-9' } }
    const batch: ThreadFork = { threadId: 'whatif', at: { batchId: 'run-9' }, createdAt: '2026-12-02T10:00:00Z' }
    expect(branchTree('whatif', parent, [user('m1')], [], [batch]).points).toEqual([
      { at: { batchId: 'run-9' }, threadIds: ['root', 'whatif'], index: 1 },
    ])
  })
})

describe('the branch actions of the reducer', () => {
  const tree = branchTree('t1', undefined, [], [fork('f', 'm1')], [])

  it('a command in flight is numbered; only its own end clears it', () => {
    const started = reduce(initialState('t1', [], undefined), { type: 'branch/started', op: 2 })
    expect(started.branching).toBe(2)
    expect(reduce(started, { type: 'branch/ended', op: 1 })).toBe(started)
    expect(reduce(started, { type: 'branch/ended', op: 2 }).branching).toBeUndefined()
  })

  it('a tree lands only on its own thread; a thread change drops the tree and the command in flight', () => {
    const s = reduce(initialState('t1', [], undefined), { type: 'branch/started', op: 1 })
    const loaded = reduce(s, { type: 'branches/loaded', branches: tree })
    expect(loaded.branches).toBe(tree)
    const other = reduce(initialState('t2', [], undefined), { type: 'branches/loaded', branches: tree })
    expect(other.branches).toBeUndefined()
    const moved = reduce(loaded, { type: 'thread/changed', threadId: 'f' })
    expect(moved).toMatchObject({ branching: undefined, branches: undefined })
  })
})
