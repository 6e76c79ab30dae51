import { describe, expect, it } from 'vitest'
import { defined } from './defined.ts'

describe('defined', () => {
  it('keeps the fields that have a value, falsy ones included, and leaves undefined ones out', () => {
    const fields = defined({ a: 1, b: undefined, c: 0, d: '', e: null, f: false })
    expect(fields).toStrictEqual({ a: 1, c: 0, d: '', e: null, f: false })
    expect('b' in fields).toBe(false)
  })
})
