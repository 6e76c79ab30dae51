/**
 * A module loaded on first need by a dynamic `import()` (foreign-server support, the branch commands): one load shared
 * by every caller; a failed load (a chunk the network lost) is tried again next time.
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined
  return () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined
      throw error
    }))
}
