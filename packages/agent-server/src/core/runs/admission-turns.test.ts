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

/** An admission: waits for its turn, works `workMs`, decides with a claim. Returns the iteration its turn came in. */
async function admit(turns: AdmissionTurns, iterations: { now: () => number }, workMs: number): Promise<number> {
  const turn = turns.take()
  if (turn) await turn
  const ranIn = iterations.now()
  busy(workMs)
  await turns.admit(roundTrip)
  return ranIn
}

describe('AdmissionTurns', () => {
  it('a lone admission takes its turn at once (no wait, nothing queued)', () => {
    const turns = new AdmissionTurns()
    expect(turns.take()).toBeUndefined()
    expect(turns.waiting).toBe(0)
    expect(turns.holding).toBe(false)
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
    expect(turns.holding).toBe(true)
    const ranIn = await Promise.all(runs)
    iterations.stop()
    // First come first served, within an iteration and across them.
    expect(order).toEqual(Array.from({ length: 12 }, (_, i) => i))
    expect(ranIn).toEqual([...ranIn].sort((a, b) => a - b))
    // 0.4 ms each in slices of 1 ms: at most three per iteration, so the loop read its sockets in between.
    const perIteration = new Map<number, number>()
    for (const i of ranIn) perIteration.set(i, (perIteration.get(i) ?? 0) + 1)
    expect(Math.max(...perIteration.values())).toBeLessThanOrEqual(3)
    expect(perIteration.size).toBeGreaterThanOrEqual(4)
    expect(turns.waiting).toBe(0)
    expect(turns.admitting).toBe(0)
  })

  it('with a generous slice, the queued requests of a burst go in two iterations', async () => {
    const turns = new AdmissionTurns({ sliceMs: 1_000 })
    const iterations = loopIterations()
    const ranIn = await Promise.all(Array.from({ length: 20 }, () => admit(turns, iterations, 0.05)))
    iterations.stop()
    // The first ran where it was read; of the 19 queued, one in the slice its arrival scheduled (planned before the
    // others were read), the other 18 together in the next.
    expect(new Set(ranIn.slice(1)).size).toBe(2)
    expect(ranIn.filter((i) => i === ranIn[2]).length).toBe(18)
  })

  it('an admitted run waits while an admission decides, and starts once none does', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 60_000 })
    let answer!: () => void
    const deciding = turns.admit(() => new Promise<void>((resolve) => (answer = resolve)))
    expect(turns.admitting).toBe(1)
    let started = false
    const run = turns.admissionsFirst().then(() => (started = true))
    for (let i = 0; i < 5; i++) await roundTrip()
    expect(started).toBe(false)
    answer()
    await deciding
    await run
    expect(started).toBe(true)
  })

  it('an admitted run waits while requests wait for their turn, even if none of them decides', async () => {
    const turns = new AdmissionTurns({ sliceMs: 1, maxRunDelayMs: 60_000 })
    const iterations = loopIterations()
    expect(turns.take()).toBeUndefined()
    // Ten queued requests, each refused after 0.4 ms of work in its turn (a refusal never calls `admit`).
    let granted = 0
    const grantedIn: number[] = []
    const queued = Array.from({ length: 10 }, async () => {
      await turns.take()
      grantedIn.push(iterations.now())
      busy(0.4)
      granted += 1
    })
    expect(turns.waiting).toBe(10)
    expect(turns.admitting).toBe(0)
    expect(turns.holding).toBe(true)
    let grantedWhenStarted = -1
    const run = turns.admissionsFirst().then(() => (grantedWhenStarted = granted))
    await Promise.all(queued)
    await run
    iterations.stop()
    // The turns were spread over several iterations, and the run waited for the last of them.
    expect(new Set(grantedIn).size).toBeGreaterThanOrEqual(3)
    expect(grantedWhenStarted).toBe(10)
    expect(turns.holding).toBe(false)
  })

  it('release() starts the held runs at once and holds none afterwards (a closing server)', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 60_000 })
    // An admission that never ends would hold runs for a minute.
    void turns.admit(() => new Promise<void>(() => undefined))
    let started = false
    const held = turns.admissionsFirst().then(() => (started = true))
    for (let i = 0; i < 5; i++) await roundTrip()
    expect(started).toBe(false)
    turns.release()
    await held
    expect(started).toBe(true)
    expect(turns.admitting).toBe(1)
    expect(turns.holding).toBe(false)
    // A run admitted after the release is not held either.
    await turns.admissionsFirst()
  })

  it('a refusal inside `admit` still ends the admission', async () => {
    const turns = new AdmissionTurns()
    await expect(turns.admit(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused')
    expect(turns.admitting).toBe(0)
    expect(turns.holding).toBe(false)
  })

  it('with nothing held, a run starts in the next iteration', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 60_000 })
    await turns.admissionsFirst()
    expect(turns.holding).toBe(false)
  })

  it('a run is held back at most maxRunDelayMs by an admission that does not end', async () => {
    const turns = new AdmissionTurns({ maxRunDelayMs: 20 })
    // A claim that never answers (a stuck connection): the run starts anyway.
    void turns.admit(() => new Promise<void>(() => undefined))
    await turns.admissionsFirst()
    expect(turns.admitting).toBe(1)
  })

  it('refuses a slice or delay that is not a number in range', () => {
    expect(() => new AdmissionTurns({ sliceMs: 0 })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ sliceMs: Number.NaN })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ maxRunDelayMs: -1 })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ maxRunDelayMs: 60_001 })).toThrow(RangeError)
    expect(() => new AdmissionTurns({ maxRunDelayMs: 60_000 })).not.toThrow()
    expect(() => new AdmissionTurns({ maxRunDelayMs: Number.POSITIVE_INFINITY })).toThrow(RangeError)
  })
})
