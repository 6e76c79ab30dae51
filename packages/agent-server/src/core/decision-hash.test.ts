import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { decisionHash } from '@interlude/protocol'
import type { ResumeEntry } from '@interlude/protocol'
import { decisionHashSync } from './decision-hash.ts'

describe('decisionHashSync', () => {
  it('equals the protocol decisionHash for any decision', async () => {
    const entry = fc.record(
      {
        interruptId: fc.string({ minLength: 1, maxLength: 8 }),
        status: fc.constantFrom('resolved' as const, 'cancelled' as const),
        payload: fc.jsonValue({ maxDepth: 3 }),
        metadata: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
      },
      { requiredKeys: ['interruptId', 'status'] },
    )
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 4 }), async (entries) => {
        const clean = JSON.parse(JSON.stringify(entries)) as ResumeEntry[]
        expect(decisionHashSync(clean)).toBe(await decisionHash(clean))
      }),
      { numRuns: 200 },
    )
  })
})
