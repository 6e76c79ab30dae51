import { describe, expect, it } from 'vitest'
import { isRunAccepted } from './multitask.ts'
import { RunAcceptedSchema } from './schemas.ts'

const queued = { threadId: 't', runId: 'r2', queued: 2 }
const steered = { threadId: 't', runId: 'r1', steered: true }

describe('202 answers of POST /runs', () => {
  it('accepts a queued input and a steer, by the light check and by the schema', () => {
    for (const body of [queued, steered]) {
      expect(isRunAccepted(body)).toBe(true)
      expect(RunAcceptedSchema.safeParse(body).success).toBe(true)
    }
  })

  it('refuses positions below 1, a steer that is not `true`, and missing ids', () => {
    const bad = [
      { ...queued, queued: 0 },
      { ...queued, queued: 1.5 },
      { ...steered, steered: false },
      { threadId: 't', queued: 1 },
      { runId: 'r', steered: true },
      { threadId: 't', runId: 'r' },
      null,
      'queued',
    ]
    for (const body of bad) {
      expect(isRunAccepted(body)).toBe(false)
      expect(RunAcceptedSchema.safeParse(body).success).toBe(false)
    }
  })
})
