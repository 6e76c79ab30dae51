import type { Store } from '../store/store.ts'

/** Methods that replace a store's own (each closes over the real store to call it). */
export type StoreOverrides = { readonly [K in keyof Store]?: Store[K] }

/**
 * The store with some methods replaced, e.g. an admission view that waits for a gate (a stuck connection) or a close
 * that lets something happen first. Every other method is the store's own, bound to it.
 */
export function interceptStore(store: Store, overrides: StoreOverrides): Store {
  return new Proxy(store, {
    get(target, key) {
      const override = (overrides as Readonly<Record<PropertyKey, unknown>>)[key]
      if (override !== undefined) return override
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}
