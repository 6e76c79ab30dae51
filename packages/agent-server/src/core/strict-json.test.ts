import { describe, expect, it } from 'vitest'
import { NotJsonError, parseJson, resultText, strictJson } from './strict-json.ts'

describe('strict JSON (B3)', () => {
  it('strictJson refuses what JSON.stringify would throw on or silently change', () => {
    expect(strictJson({ a: 1, b: [true, null, 'x'], c: undefined })).toBe('{"a":1,"b":[true,null,"x"]}')
    expect(strictJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}')
    const circular: Record<string, unknown> = {}
    circular.self = circular
    for (const bad of [
      10n,
      { n: 10n },
      circular,
      { f: () => 1 },
      [undefined],
      { n: Number.NaN },
      { s: Symbol('x') },
      () => 1,
    ]) {
      expect(() => strictJson(bad)).toThrow()
    }
  })

  it('resultText: a string as-is, nothing as null, anything else strict JSON', () => {
    expect(resultText('plain text')).toBe('plain text')
    expect(resultText('{"already":"json"}')).toBe('{"already":"json"}')
    expect(resultText(undefined)).toBe('null')
    expect(resultText(null)).toBe('null')
    expect(resultText({ status: 'denied', reason: 'no' })).toBe('{"status":"denied","reason":"no"}')
    expect(resultText([1, 'two'])).toBe('[1,"two"]')
    expect(() => resultText({ n: 1n })).toThrow(NotJsonError)
    expect(() => resultText({ f: () => 1 })).toThrow(NotJsonError)
  })

  it('parseJson never throws', () => {
    expect(parseJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } })
    expect(parseJson('{"a":')).toEqual({ ok: false })
    expect(parseJson('')).toEqual({ ok: false })
  })
})
