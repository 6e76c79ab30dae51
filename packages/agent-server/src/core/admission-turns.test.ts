import { describe, expect, it } from 'vitest'
import { AdmissionTurns } from './admission-turns.ts'

/** Counts event-loop iterations: one increment per check phase (an immediate that re-queues itself). */
function loopIterations(): { readonly now: () => number; readonly stop: () => void } {
  let count = 0
  let stopped = false
  const tick = () => {
    count += 1
    if (!stopped) setImmediate(tick)
  }
  setImmediate(tick)
  return { now: () => count, stop: () => (stopped = true) }
}

/** Keeps the CPU busy for `ms` (an admission's own work: parsing, checks). */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}

/** A round trip to the database: answered in a later iteration. */
const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve))

/** An admission: waits for its turn, works `workMs`, waits for its claim, ends. Returns the iteration it ran in. */
async function admit(turns: AdmissionTurns, iterations: { now: () => number }, workMs: number): Promise<number> {
  const turn = turns.take()
  try {
    if (turn) await turn
    const ranIn = iterations.now()
    busy(workMs)
    await roundTrip()
    return ranIn
  } finally {
    turns.end()
  }
}

describe('AdmissionTurns', () => {
  it('a lone admission takes its turn at once (no wait, nothing queued)', () => {
    const turns = new AdmissionTurns()
    expect(turns.take()).toBeUndefined()
    expect(turns.inProgress).toBe(1)
    turns.end()
    expect(turns.inProgress).toBe(0)
  })

  it('a burst is let through first come first served, a slice of about sliceMs per event-loop iteration', async () => {
    const turns = new AdmissionTurns({ sliceMs: 1 })
    const iterations = loopIterations()
    const order: number[] = []
    // Twelve requests read in one go: the first runs at once, the others queue.
    const runs = Array.from({ length: 12 }, (_, i) =>
      admit(turns, iterations, 0.4).then((ranIn) => {
        order.push(i)
        return ranIn
      }),
    )
    expect(turns.waiting).toBe(11)
    const ranIn = await Promise.all(runs)
    iterations.stop()
    // First come first served.
    expect(ranIn).toEqual([...ranIn].sort((a, b) => a - b))
    // 0.4 ms each in slices of 1 ms: at most three per iteration, so the loop read its sockets in between.
    const perIteration = new Map<number, number>()
    for (const i of ranIn) perIteration.set(i, (perIteration.get(i) ?? 0) + 1)
    expect(Math.max(...perIteration.values())).toBeLessThanOrEqual(3)
    expect(perIteration.size).toBeGreaterThanOrEqual(4)
    expect(turns.inProgress).toBe(0)
    expect(turns.waiting).toBe(0)
  })

  it('with a generous slice, the queued requests of a burst all go in one iteration', async () => {
    const turns = new AdmissionTurns({ sliceMs: 1_000 })
    const iterations = loopIterations()
    const ranIn = await Promise.all(Array.from({ length: 20 }, () => admit(turns, iterations, 0.05)))
    iterations.stop()
    // The first ran where it was read; of the 19 queued, one in the slice its arrival scheduled (planned before the
    // others were read), the other 18 together in the next.
    expect(new Set(ranIn.slice(1)).size).toBe(2)
    expect(ranIn.filter((i) => i === ranIn[2]).length).toBe(18)
  })

  it('an admitted run starts once no admission is in progress', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 60_000 })
    expect(turns.take()).toBeUndefined()
    let started = false
    const run = turns.admissionsFirst().then(() => (started = true))
    for (let i = 0; i < 5; i++) await roundTrip()
    expect(started).toBe(false)
    turns.end()
    await run
    expect(started).toBe(true)
  })

  it('with no admission in progress, a run starts in the next iteration', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 60_000 })
    await turns.admissionsFirst()
    expect(turns.inProgress).toBe(0)
  })

  it('a run is held back at most maxRunDelayMs by admissions that do not end', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 20 })
    expect(turns.take()).toBeUndefined()
    // The admission never ends (a stuck claim): the run starts anyway.
    await turns.admissionsFirst()
    expect(turns.inProgress).toBe(1)
    turns.end()
  })

  it('refuses a slice or delay that is not a number in range', () => {
    expect(() => new AdmissionTurns({ sliceMs: 0 })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ sliceMs: Number.NaN })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ maxRunDelayMs: -1 })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ maxRunDelayMs: Number.POSITIVE_INFINITY })).toThrow(RangeError)
  })
})
