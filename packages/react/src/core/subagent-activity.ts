import type { AgUiEvent } from '@interlude/protocol'

/**
 * What the subagents of the parent's tool calls are doing (docs/client-contract.md#subagents). Their events arrive in
 * the parent's stream as `CUSTOM { name: "interlude.subagent", value: { subagentRunId, agent, parentToolCallId,
 * event } }`, where `event` is the subagent's own AG-UI event. They are folded into one record per subagent run and
 * never enter the parent's message list. Anything malformed is ignored: a display aid must never fail a run.
 */

export const SUBAGENT_EVENT_NAME = 'interlude.subagent'

export type SubagentStatus = 'running' | 'interrupted' | 'finished' | 'failed'

/** One tool call of a subagent, as far as its events told. */
export interface SubagentToolCall {
  readonly toolCallId: string
  readonly toolName: string
  /** The raw argument text (streamed deltas joined). */
  readonly args: string
  /** The result's text, once `TOOL_CALL_RESULT` arrived. */
  readonly result: string | undefined
}

/** The activity of one subagent run, keyed by `subagentRunId` in `ChatSnapshot.subagents`. */
export interface SubagentActivity {
  readonly subagentRunId: string
  /** The subagent's name (`agent` of its events), e.g. `auditor`. */
  readonly agent: string
  /** The parent's tool call that runs the subagent. */
  readonly parentToolCallId: string | undefined
  readonly status: SubagentStatus
  /** Its text so far (messages separated by a blank line), at most `SUBAGENT_TEXT_LIMIT` characters. */
  readonly text: string
  /** Text beyond the limit was dropped. */
  readonly truncated: boolean
  /** At most `SUBAGENT_TOOL_CALL_LIMIT`, in call order. */
  readonly toolCalls: readonly SubagentToolCall[]
}

export type SubagentActivities = Readonly<Record<string, SubagentActivity>>

/** Bounds of one record (docs/client-contract.md#subagents): a chatty subagent cannot grow the snapshot without end. */
export const SUBAGENT_TEXT_LIMIT = 100_000
export const SUBAGENT_TOOL_CALL_LIMIT = 200
/** Subagent runs kept per thread; the oldest finished ones are dropped first. */
export const SUBAGENT_RUN_LIMIT = 100

export const NO_SUBAGENTS: SubagentActivities = Object.freeze({})

type Loose = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Loose =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

/** The `value` of an `interlude.subagent` event when it has the contract's shape; else undefined. */
function subagentValue(
  event: AgUiEvent,
): { runId: string; agent: string | undefined; parent: string | undefined; inner: Loose } | undefined {
  const e = event as { type?: unknown; name?: unknown; value?: unknown }
  if (e.type !== 'CUSTOM' || e.name !== SUBAGENT_EVENT_NAME || !isRecord(e.value)) return undefined
  const runId = str(e.value.subagentRunId)
  const inner = e.value.event
  if (runId === undefined || !isRecord(inner) || typeof inner.type !== 'string') return undefined
  return { runId, agent: str(e.value.agent), parent: str(e.value.parentToolCallId), inner }
}

/** Status markers, tolerant of the exact names (`RUN_STARTED`, `SUBAGENT_FINISHED`, `interlude.subagent.finished`…). */
function statusOf(inner: Loose, previous: SubagentStatus | undefined): SubagentStatus | undefined {
  const type = inner.type as string
  // Only run-level markers change the status: a step or a message ending is not the subagent ending.
  if (/^(TEXT_MESSAGE|TOOL_CALL|STEP|REASONING|THINKING|STATE|MESSAGES|ACTIVITY)_/.test(type)) return undefined
  const marker = type.toUpperCase()
  if (/ERROR|FAIL/.test(marker)) return 'failed'
  if (/FINISH|END|DONE|COMPLETE/.test(marker)) {
    const outcome = inner.outcome
    const kind = isRecord(outcome) ? outcome.type : outcome
    return kind === 'interrupt' || /INTERRUPT/.test(marker) ? 'interrupted' : 'finished'
  }
  if (/INTERRUPT|PAUS/.test(marker)) return 'interrupted'
  if (/START|RESUM/.test(marker)) return 'running'
  return previous
}

const textOf = (content: unknown): string => (typeof content === 'string' ? content : (JSON.stringify(content) ?? ''))

function withToolCall(
  calls: readonly SubagentToolCall[],
  toolCallId: string,
  change: (call: SubagentToolCall) => SubagentToolCall,
  create: boolean,
): readonly SubagentToolCall[] {
  const index = calls.findIndex((c) => c.toolCallId === toolCallId)
  if (index < 0) {
    if (!create || calls.length >= SUBAGENT_TOOL_CALL_LIMIT) return calls
    return Object.freeze([...calls, change({ toolCallId, toolName: 'tool', args: '', result: undefined })])
  }
  const next = [...calls]
  next[index] = change(calls[index]!)
  return Object.freeze(next)
}

function applyInner(activity: SubagentActivity, inner: Loose): SubagentActivity {
  const type = inner.type as string
  const status = statusOf(inner, activity.status) ?? activity.status
  let { text, truncated, toolCalls } = activity
  const append = (delta: unknown) => {
    if (typeof delta !== 'string' || delta === '' || truncated) return
    const room = SUBAGENT_TEXT_LIMIT - text.length
    if (delta.length > room) truncated = true
    text += delta.slice(0, Math.max(0, room))
  }
  const callId = str(inner.toolCallId)
  switch (type) {
    case 'TEXT_MESSAGE_START':
      if (text !== '' && !text.endsWith('\n\n')) append('\n\n')
      break
    case 'TEXT_MESSAGE_CONTENT':
    case 'TEXT_MESSAGE_CHUNK':
      append(inner.delta)
      break
    case 'TOOL_CALL_START':
    case 'TOOL_CALL_CHUNK':
      if (callId !== undefined) {
        const name = str(inner.toolCallName)
        const delta = typeof inner.delta === 'string' ? inner.delta : ''
        toolCalls = withToolCall(
          toolCalls,
          callId,
          (c) => ({ ...c, toolName: name ?? c.toolName, args: c.args + delta }),
          true,
        )
      }
      break
    case 'TOOL_CALL_ARGS':
      if (callId !== undefined && typeof inner.delta === 'string') {
        const delta = inner.delta
        toolCalls = withToolCall(toolCalls, callId, (c) => ({ ...c, args: c.args + delta }), false)
      }
      break
    case 'TOOL_CALL_RESULT':
      if (callId !== undefined) {
        const result = textOf(inner.content)
        toolCalls = withToolCall(toolCalls, callId, (c) => ({ ...c, result }), true)
      }
      break
  }
  if (status === activity.status && text === activity.text && toolCalls === activity.toolCalls) return activity
  return Object.freeze({ ...activity, status, text, truncated, toolCalls })
}

/** Keeps at most `SUBAGENT_RUN_LIMIT` records, dropping the oldest settled ones (then the oldest). */
function bounded(records: Record<string, SubagentActivity>): Record<string, SubagentActivity> {
  const ids = Object.keys(records)
  if (ids.length <= SUBAGENT_RUN_LIMIT) return records
  const settled = ids.filter((id) => records[id]!.status !== 'running')
  const drop = [...settled, ...ids.filter((id) => records[id]!.status === 'running')].slice(
    0,
    ids.length - SUBAGENT_RUN_LIMIT,
  )
  for (const id of drop) delete records[id]
  return records
}

/**
 * Folds the `interlude.subagent` events of a chunk into the records. Pure; answers the same object when nothing
 * changed, and unchanged records keep their identity.
 */
export function withSubagentEvents(activities: SubagentActivities, events: readonly AgUiEvent[]): SubagentActivities {
  let next: Record<string, SubagentActivity> | undefined
  for (const event of events) {
    const value = subagentValue(event)
    if (value === undefined) continue
    const current = (next ?? activities)[value.runId]
    const base: SubagentActivity = current ?? {
      subagentRunId: value.runId,
      agent: value.agent ?? 'subagent',
      parentToolCallId: value.parent,
      status: 'running',
      text: '',
      truncated: false,
      toolCalls: Object.freeze([]),
    }
    const named =
      current !== undefined && value.agent !== undefined && current.agent === 'subagent'
        ? { ...base, agent: value.agent }
        : base
    const updated = applyInner(named, value.inner)
    if (updated === current) continue
    next ??= { ...activities }
    next[value.runId] = Object.isFrozen(updated) ? updated : Object.freeze(updated)
  }
  return next === undefined ? activities : Object.freeze(bounded(next))
}

const byToolCallCache = new WeakMap<SubagentActivities, ReadonlyMap<string, readonly SubagentActivity[]>>()

/**
 * The subagent runs of each parent tool call (`parentToolCallId` → records in arrival order). Memoized per
 * `subagents` object, so it is identity-stable per snapshot.
 */
export function subagentsByToolCall(activities: SubagentActivities): ReadonlyMap<string, readonly SubagentActivity[]> {
  const cached = byToolCallCache.get(activities)
  if (cached !== undefined) return cached
  const map = new Map<string, SubagentActivity[]>()
  for (const activity of Object.values(activities)) {
    if (activity.parentToolCallId === undefined) continue
    const list = map.get(activity.parentToolCallId)
    if (list === undefined) map.set(activity.parentToolCallId, [activity])
    else list.push(activity)
  }
  byToolCallCache.set(activities, map)
  return map
}
