import type { JsonPatch } from '@interlude/protocol'

/**
 * RFC 6902 JSON Patch for `STATE_DELTA` and `ACTIVITY_DELTA`, applied without mutating the document: only the
 * containers along each changed path are copied (structural sharing), and a change that leaves a value as it was
 * keeps its container. It follows the rules of immutable-json-patch 6, which it replaced
 * (docs/react-runtime.md#json-patch): `add` below a missing parent, an unknown op or a failing `test` throw; `replace`
 * of a missing path and `remove` of a missing last key change nothing.
 */

type Path = readonly string[]
type Container = Record<string, unknown>

const OPS = ['add', 'remove', 'replace', 'copy', 'move', 'test']

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null

const parse = (pointer: string): string[] =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))

function get(document: unknown, path: Path): unknown {
  let value = document
  for (const key of path)
    value = Array.isArray(value) ? value[Number.parseInt(key, 10)] : isContainer(value) ? value[key] : undefined
  return value
}

function exists(document: unknown, path: Path): boolean {
  let value = document
  for (const key of path) {
    if (value === undefined || value === null) return false
    value = (value as Container)[key]
  }
  return value !== undefined
}

const copyOf = (container: Container): Container =>
  Array.isArray(container) ? (container.slice() as unknown as Container) : { ...container }

/** A shallow copy of `container` with `key` set (the same container when the value is already there). */
function assign(container: Container, key: string, value: unknown): Container {
  if (container[key] === value) return container
  const copy = copyOf(container)
  copy[key] = value
  return copy
}

/** A copy of an array with `count` items removed at `index` and `items` inserted there. */
function spliced(array: readonly unknown[], index: string, count: number, ...items: unknown[]): unknown[] {
  const copy = array.slice()
  copy.splice(Number.parseInt(index, 10), count, ...items)
  return copy
}

function setIn(document: unknown, path: Path, value: unknown, at = 0): unknown {
  if (at === path.length) return value
  if (!isContainer(document)) throw new Error('Path does not exist')
  const key = path[at]!
  return assign(document, key, setIn(document[key], path, value, at + 1))
}

function removeIn(document: unknown, path: Path, at = 0): unknown {
  if (path.length === 0) return document
  if (!isContainer(document)) throw new Error('Path does not exist')
  const key = path[at]!
  if (at < path.length - 1) return assign(document, key, removeIn(document[key], path, at + 1))
  if (!(key in document)) return document
  if (Array.isArray(document)) return spliced(document, key, 1)
  const copy = copyOf(document)
  delete copy[key]
  return copy
}

/** `add`: into an array it inserts at the index, anywhere else it sets. */
function addIn(document: unknown, path: Path, value: unknown): unknown {
  const parentPath = path.slice(0, -1)
  const parent = path.length > 0 ? get(document, parentPath) : undefined
  if (!Array.isArray(parent)) return setIn(document, path, value)
  return setIn(document, parentPath, spliced(parent, path.at(-1)!, 0, value))
}

export function applyPatch(document: unknown, patch: JsonPatch): unknown {
  let result = document
  for (const operation of patch as readonly Record<string, unknown>[]) {
    const { op, path: pointer, from, value } = operation
    if (typeof op !== 'string' || !OPS.includes(op)) throw new Error(`Unknown JSONPatch op ${JSON.stringify(op)}`)
    if (typeof pointer !== 'string' || ((op === 'copy' || op === 'move') && typeof from !== 'string'))
      throw new Error(`Required property missing or not a string in operation ${JSON.stringify(operation)}`)
    let path: Path = parse(pointer)
    // `-` names the end of an array.
    if (path.at(-1) === '-') path = [...path.slice(0, -1), String((get(result, path.slice(0, -1)) as []).length)]
    const source = typeof from === 'string' ? parse(from) : []
    switch (op) {
      case 'add':
        result = addIn(result, path, value)
        break
      case 'remove':
        result = removeIn(result, path)
        break
      case 'replace':
        if (exists(result, path)) result = setIn(result, path, value)
        break
      case 'copy':
        result = addIn(result, path, get(result, source))
        break
      case 'move': {
        const moved = get(result, source)
        result = addIn(removeIn(result, source), path, moved)
        break
      }
      default:
        if (value === undefined || !exists(result, path) || JSON.stringify(get(result, path)) !== JSON.stringify(value))
          throw new Error(`Test failed (path: "${pointer}")`)
    }
  }
  return result
}
