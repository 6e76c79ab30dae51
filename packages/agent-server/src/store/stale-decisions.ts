/**
 * Stale approvals (docs/approvals.md#stale-approvals): the decision record's `stale_interrupt_ids`, one id added once.
 * Both stores read the row, add the id and write it back inside their fenced write transaction.
 */

/** The column's new value, or `undefined` when `interruptId` is in it already. */
export function withStaleInterrupt(column: string | null | undefined, interruptId: string): string | undefined {
  const ids = column ? (JSON.parse(column) as string[]) : []
  return ids.includes(interruptId) ? undefined : JSON.stringify([...ids, interruptId])
}
