import { describe, expect, it } from 'vitest'
import { remoteRefs, SchemaDefinitionError, ValidatorCache } from './validator-cache.ts'

describe('ValidatorCache', () => {
  it('compiles each distinct schema once, whatever its key order', () => {
    const cache = new ValidatorCache()
    const a = cache.compile({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] })
    const b = cache.compile({ required: ['x'], properties: { x: { type: 'string' } }, type: 'object' })
    expect(a).toBe(b)
    expect(cache.size).toBe(1)
  })

  it('reports every error with its instance path', () => {
    const cache = new ValidatorCache()
    const schema = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'string' } },
      required: ['a', 'b'],
      additionalProperties: false,
    }
    expect(cache.validate(schema, { a: 1, b: 'x' })).toEqual({ ok: true })
    const result = cache.validate(schema, { a: 'no', c: 1 })
    expect(result.ok).toBe(false)
    if (!result.ok)
      expect(result.issues.map((i) => `${i.path}:${i.keyword}`).sort()).toEqual([
        '/:additionalProperties',
        '/:required',
        '/a:type',
      ])
  })

  it('is strict: unknown keywords are schema errors, not silently ignored', () => {
    expect(() => new ValidatorCache().compile({ type: 'object', propertiez: {} })).toThrow(SchemaDefinitionError)
  })

  it('checks the presented formats, accepts the widget hint, and keeps unknown formats as annotations', () => {
    const cache = new ValidatorCache()
    const schema = {
      type: 'object',
      properties: {
        contact: { type: 'string', format: 'email', 'x-interlude-widget': 'textarea' },
        day: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
        link: { type: 'string', format: 'uri' },
        color: { type: 'string', format: 'x-brand-color' },
      },
    }
    expect(
      cache.validate(schema, {
        contact: 'oncall@example.com',
        day: '2026-12-01',
        at: '2026-12-01T10:30:00.000Z',
        link: 'https://example.com/runbook',
        color: 'anything goes',
      }).ok,
    ).toBe(true)
    const bad = cache.validate(schema, { contact: 'nope', day: '12/01/2026', at: 'tomorrow', link: 'not a uri' })
    expect(bad.ok).toBe(false)
    expect(bad.ok ? [] : bad.issues.map((i) => `${i.path}:${i.keyword}`).sort()).toEqual([
      '/at:format',
      '/contact:format',
      '/day:format',
      '/link:format',
    ])
    expect(() => cache.compile({ type: 'string', 'x-interlude-widget': 3 })).toThrow(SchemaDefinitionError)
  })

  it('never resolves remote $ref or $id', () => {
    const cache = new ValidatorCache()
    expect(() => cache.compile({ $ref: 'https://example.com/schema.json' })).toThrow(/Remote/)
    expect(() => cache.compile({ $id: 'https://example.com/s', type: 'string' })).toThrow(/Remote/)
    expect(
      remoteRefs({ definitions: { a: { type: 'string' } }, properties: { x: { $ref: '#/definitions/a' } } }),
    ).toEqual([])
    expect(
      cache.validate(
        { type: 'object', definitions: { a: { type: 'string' } }, properties: { x: { $ref: '#/definitions/a' } } },
        { x: 1 },
      ).ok,
    ).toBe(false)
  })

  it('drops the least recently used validator beyond its capacity', () => {
    const cache = new ValidatorCache({ maxEntries: 2 })
    cache.compile({ type: 'string' })
    cache.compile({ type: 'number' })
    cache.compile({ type: 'boolean' })
    expect(cache.size).toBe(2)
  })
})
