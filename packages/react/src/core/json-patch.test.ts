import type { JsonPatch } from '@interlude/protocol'
import fc from 'fast-check'
import { immutableJSONPatch } from 'immutable-json-patch'
import type { JSONPatchDocument } from 'immutable-json-patch'
import { describe, expect, it } from 'vitest'
import { deepFreeze } from './immutable.ts'
import { applyPatch } from './json-patch.ts'

const apply = (document: unknown, patch: unknown[]) => applyPatch(deepFreeze(document), patch as JsonPatch)

describe('applyPatch: RFC 6902, appendix A', () => {
  const examples: [name: string, document: unknown, patch: unknown[], result: unknown][] = [
    [
      'A.1 add an object member',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux' }],
      { foo: 'bar', baz: 'qux' },
    ],
    [
      'A.2 add an array element',
      { foo: ['bar', 'baz'] },
      [{ op: 'add', path: '/foo/1', value: 'qux' }],
      { foo: ['bar', 'qux', 'baz'] },
    ],
    ['A.3 remove an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [
      'A.4 remove an array element',
      { foo: ['bar', 'qux', 'baz'] },
      [{ op: 'remove', path: '/foo/1' }],
      { foo: ['bar', 'baz'] },
    ],
    [
      'A.5 replace a value',
      { baz: 'qux', foo: 'bar' },
      [{ op: 'replace', path: '/baz', value: 'boo' }],
      { baz: 'boo', foo: 'bar' },
    ],
    [
      'A.6 move a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 move an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 test a value: success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 add a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [
      'A.11 ignore unrecognised elements',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      { foo: 'bar', baz: 'qux' },
    ],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    [
      'A.16 add an array value',
      { foo: ['bar'] },
      [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      { foo: ['bar', ['abc', 'def']] },
    ],
    ['copy', { a: { b: 1 } }, [{ op: 'copy', from: '/a', path: '/c' }], { a: { b: 1 }, c: { b: 1 } }],
    ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: [1] }], [1]],
    ['add the whole document', { a: 1 }, [{ op: 'add', path: '', value: 'x' }], 'x'],
  ]

  it.each(examples)('%s', (_name, document, patch, result) => {
    expect(apply(document, patch)).toEqual(result)
  })

  it.each([
    ['A.9 test a value: error', { baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]],
    ['A.12 add to a nonexistent target', { foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]],
    ['A.15 compare strings and numbers', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]],
    ['test of a missing path', { a: 1 }, [{ op: 'test', path: '/b', value: 1 }]],
    ['test without a value', { a: 1 }, [{ op: 'test', path: '/a' }]],
    ['an unknown op', { a: 1 }, [{ op: 'merge', path: '/a', value: 2 }]],
    ['a missing path', { a: 1 }, [{ op: 'add', value: 2 }]],
    ['move without from', { a: 1 }, [{ op: 'move', path: '/b' }]],
    ['copy with a non-string from', { a: 1 }, [{ op: 'copy', from: 1, path: '/b' }]],
    ['remove below a missing parent', { a: 1 }, [{ op: 'remove', path: '/b/c' }]],
  ])('%s throws', (_name, document, patch) => {
    expect(() => apply(document, patch)).toThrow(Error)
  })
})

describe('applyPatch: immutability', () => {
  it('copies only the containers along the path; the input is never changed', () => {
    const document = deepFreeze({ a: { x: 1 }, b: { y: [1, 2] }, c: [{ z: 1 }] })
    const next = applyPatch(document, [{ op: 'add', path: '/b/y/-', value: 3 }]) as typeof document
    expect(next.b.y).toEqual([1, 2, 3])
    expect(next).not.toBe(document)
    expect(next.b).not.toBe(document.b)
    expect(next.a).toBe(document.a)
    expect(next.c).toBe(document.c)
    expect(document.b.y).toEqual([1, 2])
  })

  it('tolerates replace of a missing path and remove of a missing last key (as immutable-json-patch did)', () => {
    const document = deepFreeze({ a: { x: 1 } })
    expect(applyPatch(document, [{ op: 'replace', path: '/a/missing/deep', value: 1 }])).toBe(document)
    expect(applyPatch(document, [{ op: 'remove', path: '/a/missing' }])).toBe(document)
    expect(applyPatch(document, [{ op: 'replace', path: '/a/x', value: 1 }])).toBe(document) // the same value
  })
})

// What immutable-json-patch 6.0.3 (the dependency this replaced) does, compared on random documents and patches.
describe('applyPatch: the same results as immutable-json-patch', () => {
  const key = fc.constantFrom('a', 'b', 'c', '0', '1', '2', '-', 'a~1b', '~0')
  const leaf = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'y', true, null))
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.dictionary(key, tie('tree'), { maxKeys: 3 }),
    ),
  }))
  const pointer = fc.array(key, { maxLength: 3 }).map((keys) => keys.map((k) => `/${k}`).join(''))
  const operation = fc.oneof(
    fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value: tree }),
    fc.record({ op: fc.constant('remove'), path: pointer }),
    fc.record({ op: fc.constantFrom('copy', 'move'), from: pointer, path: pointer }),
  )

  it('agrees on every result and on every refusal', () => {
    fc.assert(
      fc.property(tree, fc.array(operation, { minLength: 1, maxLength: 4 }), (document, patch) => {
        // The result, and whether the document came back as the same object (nothing changed).
        const outcome = (run: (input: unknown) => unknown) => {
          const input = structuredClone(document)
          try {
            const value = run(input)
            return { value, same: value === input }
          } catch {
            return 'throws'
          }
        }
        const ours = outcome((input) => applyPatch(deepFreeze(input), patch as JsonPatch))
        const theirs = outcome((input) => immutableJSONPatch(input, patch as JSONPatchDocument))
        expect(ours).toEqual(theirs)
      }),
      { numRuns: 2000 },
    )
  })
})
