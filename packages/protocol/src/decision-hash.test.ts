import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ResumeEntry } from '@ag-ui/core'
import { canonicalJson, isJsonValue, NonJsonValueError } from './canonical-json.ts'
import { canonicalDecision, decisionHash } from './decision-hash.ts'

describe('canonicalJson', () => {
  it('sorts keys, drops whitespace and formats numbers like JCS', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: { z: -0, y: 1e21, x: 0.1 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"c":{"x":0.1,"y":1e+21,"z":0}}',
    )
    expect(canonicalJson('é\u2028"')).toBe(JSON.stringify('é\u2028"'))
  })

  it.each([
    [undefined, '<root>'],
    [{ a: undefined }, '.a'],
    [{ a: [1, () => 1] }, '.a[1]'],
    [{ n: Number.NaN }, '.n'],
    [{ n: Infinity }, '.n'],
    [{ d: new Date(0) }, '.d'],
    [{ m: new Map() }, '.m'],
    [{ b: 10n }, '.b'],
    [{ s: Symbol('x') }, '.s'],
    // eslint-disable-next-line no-sparse-arrays
    [[1, , 3], '[1]'],
  ])('rejects a non-JSON value (%#) with its path', (value, path) => {
    expect(() => canonicalJson(value)).toThrow(NonJsonValueError)
    try {
      canonicalJson(value)
    } catch (error) {
      expect((error as NonJsonValueError).path || '<root>').toBe(path)
    }
    expect(isJsonValue(value)).toBe(false)
  })

  it('rejects cycles but allows shared (non-cyclic) references', () => {
    const a: Record<string, unknown> = {}
    a.self = a
    expect(() => canonicalJson(a)).toThrow(NonJsonValueError)
    const shared = { x: 1 }
    expect(canonicalJson({ p: shared, q: shared })).toBe('{"p":{"x":1},"q":{"x":1}}')
  })

  it('keeps an own "__proto__" key from parsed JSON as data', () => {
    expect(canonicalJson(JSON.parse('{"b":2,"__proto__":{"a":1}}'))).toBe('{"__proto__":{"a":1},"b":2}')
  })

  it('accepts null-prototype objects', () => {
    const o = Object.assign(Object.create(null) as object, { b: 2, a: 1 })
    expect(canonicalJson(o)).toBe('{"a":1,"b":2}')
  })

  it('equals JSON.parse(JSON.stringify) for any JSON value, modulo key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalJson(JSON.parse(text))).toBe(text)
      }),
    )
  })
})

const entryArb: fc.Arbitrary<ResumeEntry> = fc.oneof(
  fc.record({
    interruptId: fc.string({ minLength: 1 }),
    status: fc.constant('resolved' as const),
    payload: fc.jsonValue(),
  }),
  fc.record({ interruptId: fc.string({ minLength: 1 }), status: fc.constant('cancelled' as const) }),
)

function shuffleKeysDeep(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffleKeysDeep(v, seed + i))
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value)
    const rotated =
      keys.length === 0 ? keys : [...keys.slice(seed % keys.length), ...keys.slice(0, seed % keys.length)].reverse()
    const out: Record<string, unknown> = {}
    // defineProperty, not assignment: fast-check generates "__proto__" keys, which assignment would turn into a prototype.
    for (const k of rotated) {
      Object.defineProperty(out, k, {
        value: shuffleKeysDeep((value as Record<string, unknown>)[k], seed + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return value
}

describe('decision hash', () => {
  it('matches SHA-256 of the canonical decision (known vector)', async () => {
    const entries: ResumeEntry[] = [
      { interruptId: 'int_b', status: 'cancelled' },
      {
        interruptId: 'int_a',
        status: 'resolved',
        payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging' } },
      },
    ]
    const canonical =
      '[{"interruptId":"int_a","payload":{"approved":true,"editedArgs":{"environment":"staging","version":"v2.1"}},"status":"resolved"},{"interruptId":"int_b","status":"cancelled"}]'
    expect(canonicalDecision(entries)).toBe(canonical)
    expect(await decisionHash(entries)).toBe(createHash('sha256').update(canonical).digest('hex'))
  })

  it('ignores entry metadata (client bookkeeping is not part of the decision)', async () => {
    const a: ResumeEntry[] = [
      { interruptId: 'i', status: 'resolved', payload: { approved: true }, metadata: { tab: 1 } },
    ]
    const b: ResumeEntry[] = [{ interruptId: 'i', status: 'resolved', payload: { approved: true } }]
    expect(await decisionHash(a)).toBe(await decisionHash(b))
  })

  it('distinguishes deny from cancel and different payloads', async () => {
    const deny = await decisionHash([{ interruptId: 'i', status: 'resolved', payload: { approved: false } }])
    const cancel = await decisionHash([{ interruptId: 'i', status: 'cancelled' }])
    const approve = await decisionHash([{ interruptId: 'i', status: 'resolved', payload: { approved: true } }])
    expect(new Set([deny, cancel, approve]).size).toBe(3)
  })

  it('is stable under entry order and key order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(entryArb, { selector: (e) => e.interruptId, minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 1000 }),
        async (entries, seed) => {
          const reordered = [...entries].reverse().map((e) => shuffleKeysDeep(e, seed) as ResumeEntry)
          expect(canonicalDecision(reordered)).toBe(canonicalDecision(entries))
          expect(await decisionHash(reordered)).toBe(await decisionHash(entries))
        },
      ),
      { numRuns: 200 },
    )
  })
})
