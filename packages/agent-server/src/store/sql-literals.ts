/**
 * The status names of `statuses.ts` as SQL literals, for statements that embed a status set (the
 * same text in SQLite and PostgreSQL). Only for those constants, never for input: quoted, not bound.
 */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** `('a', 'b')`, for `status IN …`. */
export function sqlList(values: readonly string[]): string {
  return `(${values.map(sqlString).join(', ')})`
}
