import { describe, expect, it } from 'vitest'
import { StrayRuns } from './stray-runs.ts'

describe('StrayRuns', () => {
  it('a run is due once it was stray at every renewal for afterMs; one that stops being stray starts again', () => {
    const strays = new StrayRuns(300)
    expect(strays.due(['a', 'b'], 0)).toEqual([])
    expect(strays.due(['a', 'b'], 200)).toEqual([])
    // b executes here now (not stray at this renewal): its count is gone.
    expect(strays.due(['a'], 250)).toEqual([])
    expect(strays.due(['a', 'b'], 300)).toEqual(['a'])
    expect(strays.due(['b'], 599)).toEqual([])
    expect(strays.due(['b'], 600)).toEqual(['b'])
  })

  it('a held run is never due; unheld, it is judged from then on', () => {
    const strays = new StrayRuns(100)
    strays.hold('q')
    expect(strays.due(['q'], 0)).toEqual([])
    expect(strays.due(['q'], 1_000)).toEqual([])
    strays.unhold('q')
    expect(strays.due(['q'], 1_050)).toEqual([])
    expect(strays.due(['q'], 1_150)).toEqual(['q'])
  })

  it('after a gap without renewals (clear) nothing is due at once', () => {
    const strays = new StrayRuns(100)
    expect(strays.due(['a'], 0)).toEqual([])
    strays.clear()
    expect(strays.due(['a'], 5_000)).toEqual([])
    expect(strays.due(['a'], 5_100)).toEqual(['a'])
  })
})
