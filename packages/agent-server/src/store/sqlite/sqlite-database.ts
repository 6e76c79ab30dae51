/** What `SqliteStore.database` exposes: the better-sqlite3 handle, typed without its `@types` package. */
export interface SqliteDatabase {
  prepare(source: string): {
    readonly source: string
    run(...params: unknown[]): unknown
    get(...params: unknown[]): unknown
    all(...params: unknown[]): unknown[]
  }
  exec(source: string): unknown
  pragma(source: string, options?: { readonly simple?: boolean }): unknown
}
