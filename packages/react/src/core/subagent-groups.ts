import type { Interrupt } from '@interlude/protocol'

/**
 * Grouping of a pending batch by subagent (docs/client-contract.md#subagents). An interrupt raised inside a subagent
 * carries `subagentRunId` and `metadata.subagent = { name, toolCallId }`; the batch is still answered by ONE resume
 * (the server routes each entry by its interrupt id), so grouping is presentation only and never reorders entries.
 */

/** The interrupts of one owner of the batch: the parent agent (`subagentRunId` undefined) or one subagent run. */
export interface InterruptGroup {
  /** `parent`, or `subagent:<subagentRunId>`: stable, usable as a React key. */
  readonly key: string
  readonly subagentRunId: string | undefined
  /** `metadata.subagent.name`, else `Subagent <short id>`; undefined for the parent group. */
  readonly label: string | undefined
  /** The parent's tool call that runs the subagent (`metadata.subagent.toolCallId`), when known. */
  readonly parentToolCallId: string | undefined
  /** In batch order. */
  readonly interrupts: readonly Interrupt[]
}

const EMPTY: readonly InterruptGroup[] = Object.freeze([])
const cache = new WeakMap<readonly Interrupt[], readonly InterruptGroup[]>()

/** `Subagent 1a2b3c4d`: the first 8 characters after the id's last `_`. */
export function shortSubagentLabel(subagentRunId: string): string {
  return `Subagent ${(subagentRunId.slice(subagentRunId.lastIndexOf('_') + 1) || subagentRunId).slice(0, 8)}`
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined

/**
 * The batch's interrupts grouped by owner: the parent's first (when there are any), then one group per
 * `subagentRunId` in the order of its first interrupt (whose `metadata.subagent` names the group). Pure and memoized
 * per array: the same (frozen) `interrupts` array of a snapshot always answers the same groups array, so it can be
 * used in render without `useMemo`.
 */
export function groupInterruptsBySubagent(interrupts: readonly Interrupt[] | undefined): readonly InterruptGroup[] {
  if (!interrupts?.length) return EMPTY
  let groups = cache.get(interrupts)
  if (!groups) {
    // The parent's group is created first so that it comes first; it is dropped below when empty.
    const parent = { key: 'parent', subagentRunId: undefined, label: undefined, parentToolCallId: undefined }
    const byRun = new Map<string | undefined, InterruptGroup & { interrupts: Interrupt[] }>([
      [undefined, { ...parent, interrupts: [] }],
    ])
    for (const interrupt of interrupts) {
      const runId = text((interrupt as { subagentRunId?: unknown }).subagentRunId)
      let group = byRun.get(runId)
      if (!group) {
        const meta = (interrupt.metadata as { subagent?: { name?: unknown; toolCallId?: unknown } } | undefined)
          ?.subagent
        group = {
          key: `subagent:${runId}`,
          subagentRunId: runId,
          label: text(meta?.name) ?? shortSubagentLabel(runId!),
          parentToolCallId: text(meta?.toolCallId),
          interrupts: [],
        }
        byRun.set(runId, group)
      }
      group.interrupts.push(interrupt)
    }
    groups = Object.freeze([...byRun.values()].filter((g) => g.interrupts.length > 0).map((g) => Object.freeze(g)))
    cache.set(interrupts, groups)
  }
  return groups
}
