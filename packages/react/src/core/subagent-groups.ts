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

interface SubagentMetadata {
  readonly name?: unknown
  readonly toolCallId?: unknown
}

const subagentMetadata = (interrupt: Interrupt): SubagentMetadata | undefined => {
  const value = (interrupt.metadata as { subagent?: unknown } | undefined)?.subagent
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as SubagentMetadata) : undefined
}

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined

/** `Subagent 1a2b3c4d`: the first 8 characters after any `prefix_`. */
export function shortSubagentLabel(subagentRunId: string): string {
  const tail = subagentRunId.includes('_') ? subagentRunId.slice(subagentRunId.lastIndexOf('_') + 1) : subagentRunId
  return `Subagent ${(tail || subagentRunId).slice(0, 8)}`
}

const EMPTY: readonly InterruptGroup[] = Object.freeze([])
const cache = new WeakMap<readonly Interrupt[], readonly InterruptGroup[]>()

/**
 * The batch's interrupts grouped by owner: the parent's first (when there are any), then one group per
 * `subagentRunId` in the order of its first interrupt. Pure and memoized per array: the same (frozen) `interrupts`
 * array of a snapshot always answers the same groups array, so it can be used in render without `useMemo`.
 */
export function groupInterruptsBySubagent(interrupts: readonly Interrupt[] | undefined): readonly InterruptGroup[] {
  if (interrupts === undefined || interrupts.length === 0) return EMPTY
  const cached = cache.get(interrupts)
  if (cached !== undefined) return cached
  const parent: Interrupt[] = []
  const bySubagent = new Map<
    string,
    { label: string | undefined; parentToolCallId: string | undefined; interrupts: Interrupt[] }
  >()
  for (const interrupt of interrupts) {
    const runId = nonEmpty((interrupt as { subagentRunId?: unknown }).subagentRunId)
    if (runId === undefined) {
      parent.push(interrupt)
      continue
    }
    const meta = subagentMetadata(interrupt)
    let group = bySubagent.get(runId)
    if (group === undefined) {
      group = { label: undefined, parentToolCallId: undefined, interrupts: [] }
      bySubagent.set(runId, group)
    }
    // The first interrupt that names the subagent (or its call) wins; later ones of the same run agree anyway.
    group.label ??= nonEmpty(meta?.name)
    group.parentToolCallId ??= nonEmpty(meta?.toolCallId)
    group.interrupts.push(interrupt)
  }
  const groups: InterruptGroup[] = []
  if (parent.length > 0) {
    groups.push(
      Object.freeze({
        key: 'parent',
        subagentRunId: undefined,
        label: undefined,
        parentToolCallId: undefined,
        interrupts: Object.freeze(parent),
      }),
    )
  }
  for (const [runId, group] of bySubagent) {
    groups.push(
      Object.freeze({
        key: `subagent:${runId}`,
        subagentRunId: runId,
        label: group.label ?? shortSubagentLabel(runId),
        parentToolCallId: group.parentToolCallId,
        interrupts: Object.freeze(group.interrupts),
      }),
    )
  }
  const frozen = Object.freeze(groups)
  cache.set(interrupts, frozen)
  return frozen
}
