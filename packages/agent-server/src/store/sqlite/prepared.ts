import type Database from 'better-sqlite3'

/** What the store uses of a prepared statement, typed by its parameters and rows. */
export interface Prepared<Params extends unknown[], Row> {
  run(...params: Params): Database.RunResult
  get(...params: Params): Row | undefined
  all(...params: Params): Row[]
}

/**
 * Prepares one statement of the SQLite store. Named parameters (`@name`) bind from one object: the statement's only
 * argument.
 */
export type Prepare = <Params extends unknown[] | object = [], Row = unknown>(
  source: string,
) => Prepared<Params extends unknown[] ? Params : [Params], Row>
