/**
 * Reference counting for UI bindings: returns `retain`, whose release of the last holder runs
 * `onIdle` on the next macrotask unless a holder retained again first (React StrictMode unmounts
 * and remounts effects synchronously; that must not kill the runtime).
 */
export function refCount(onIdle: () => void): () => () => void {
  let holders = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  return () => {
    holders += 1
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    let released = false
    return () => {
      if (released) return
      released = true
      holders -= 1
      if (holders === 0) {
        timer = setTimeout(() => {
          timer = undefined
          if (holders === 0) onIdle()
        }, 0)
      }
    }
  }
}
