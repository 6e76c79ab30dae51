import type { ThreadSnapshot } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { SharedRecovery } from './shared-recovery.ts'
import type { RecoverResult } from './types.ts'

const result = (threadId: string): RecoverResult => ({
  snapshot: { threadId, messages: [] } as unknown as ThreadSnapshot,
  attached: false,
})

/** A lookup the test resolves by hand, recording the signals it was given. */
function lookup() {
  const signals: AbortSignal[] = []
  const pending: ((value: RecoverResult) => void)[] = []
  const run = (signal: AbortSignal) => {
    signals.push(signal)
    return new Promise<RecoverResult>((resolve) => pending.push(resolve))
  }
  return { run, signals, pending }
}

describe('SharedRecovery', () => {
  it('shares one lookup between calls for the same thread and revision', async () => {
    const recovery = new SharedRecovery()
    const l = lookup()
    const a = recovery.join({ threadId: 't', revision: 1 }, l.run, undefined)
    const b = recovery.join({ threadId: 't', revision: 1 }, l.run, undefined)
    expect(l.signals).toHaveLength(1)
    l.pending[0]!(result('t'))
    expect(await a).toBe(await b)
  })

  it('starts a new lookup for another key, and after the shared one settled', async () => {
    const recovery = new SharedRecovery()
    const l = lookup()
    void recovery.join({ threadId: 't', revision: 1 }, l.run, undefined)
    const other = recovery.join({ threadId: 't', revision: 2 }, l.run, undefined)
    expect(l.signals).toHaveLength(2)
    l.pending[1]!(result('t'))
    await other
    void recovery.join({ threadId: 't', revision: 2 }, l.run, undefined)
    expect(l.signals).toHaveLength(3)
  })

  it("a caller's signal rejects only that caller; the lookup is aborted once every signalled caller left", async () => {
    const recovery = new SharedRecovery()
    const l = lookup()
    const first = new AbortController()
    const second = new AbortController()
    const a = recovery.join({ threadId: 't', revision: 1 }, l.run, first.signal)
    const b = recovery.join({ threadId: 't', revision: 1 }, l.run, second.signal)
    first.abort()
    await expect(a).rejects.toMatchObject({ code: 'ABORTED' })
    expect(l.signals[0]!.aborted).toBe(false)
    second.abort()
    await expect(b).rejects.toMatchObject({ code: 'ABORTED' })
    expect(l.signals[0]!.aborted).toBe(true)
  })

  it('a caller without a signal keeps the lookup alive', async () => {
    const recovery = new SharedRecovery()
    const l = lookup()
    const b = recovery.join({ threadId: 't', revision: 1 }, l.run, undefined)
    const gone = new AbortController()
    gone.abort()
    const a = recovery.join({ threadId: 't', revision: 1 }, l.run, gone.signal)
    await expect(a).rejects.toMatchObject({ code: 'ABORTED' })
    expect(l.signals[0]!.aborted).toBe(false)
    l.pending[0]!(result('t'))
    expect((await b).snapshot.threadId).toBe('t')
  })
})
