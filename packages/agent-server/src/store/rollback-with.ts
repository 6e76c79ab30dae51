/**
 * Thrown inside a store transaction to roll it back and answer `value` instead of failing: a write
 * that finds halfway that it must be refused (say, the run id is taken) leaves nothing behind and
 * still answers with a reason. Each store's transaction wrapper catches it (`rolledBack`).
 */
export class RollbackWith<T> {
  constructor(readonly value: T) {}
}

/** The answer a `RollbackWith` carries, or `undefined` for any other error (which the caller rethrows). */
export function rolledBack<T>(error: unknown): { readonly value: T } | undefined {
  return error instanceof RollbackWith ? { value: error.value as T } : undefined
}
