import type { Event as AgUiEvent, Interrupt } from '@ag-ui/core'
import { EventType } from '@ag-ui/core'

/**
 * Light structural checks for incoming AG-UI events, without zod, so that a browser bundle stays
 * small (the full zod validators of `@ag-ui/core/schemas` are ~50 KB gzipped and live in
 * `@interlude/protocol/schemas` for servers and tests). They check what a consumer relies on:
 * the discriminator and the identifiers/strings each event type needs.
 */

const KNOWN_TYPES = new Set<string>(Object.values(EventType))

const REQUIRED_STRINGS: Partial<Record<EventType, readonly string[]>> = {
  [EventType.RUN_STARTED]: ['threadId', 'runId'],
  [EventType.RUN_FINISHED]: ['threadId', 'runId'],
  [EventType.RUN_ERROR]: ['message'],
  [EventType.TEXT_MESSAGE_START]: ['messageId'],
  [EventType.TEXT_MESSAGE_CONTENT]: ['messageId', 'delta'],
  [EventType.TEXT_MESSAGE_END]: ['messageId'],
  [EventType.TOOL_CALL_START]: ['toolCallId', 'toolCallName'],
  [EventType.TOOL_CALL_ARGS]: ['toolCallId', 'delta'],
  [EventType.TOOL_CALL_END]: ['toolCallId'],
  [EventType.TOOL_CALL_RESULT]: ['messageId', 'toolCallId'],
  [EventType.STEP_STARTED]: ['stepName'],
  [EventType.STEP_FINISHED]: ['stepName'],
  [EventType.CUSTOM]: ['name'],
}

export type EventShapeProblem = { readonly path: string; readonly problem: string }

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks an interrupt list as it arrives in `RUN_FINISHED.outcome.interrupts`. */
export function interruptProblems(value: unknown, path = 'interrupts'): EventShapeProblem[] {
  if (!Array.isArray(value) || value.length === 0) return [{ path, problem: 'must be a non-empty array' }]
  const problems: EventShapeProblem[] = []
  const ids = new Set<string>()
  value.forEach((item: unknown, i) => {
    const at = `${path}[${i}]`
    if (!isRecord(item)) {
      problems.push({ path: at, problem: 'must be an object' })
      return
    }
    if (typeof item.id !== 'string' || item.id === '')
      problems.push({ path: `${at}.id`, problem: 'must be a non-empty string' })
    else if (ids.has(item.id)) problems.push({ path: `${at}.id`, problem: 'duplicate interrupt id' })
    else ids.add(item.id)
    if (typeof item.reason !== 'string') problems.push({ path: `${at}.reason`, problem: 'must be a string' })
    for (const key of ['message', 'toolCallId', 'subagentRunId'] as const) {
      if (item[key] !== undefined && typeof item[key] !== 'string')
        problems.push({ path: `${at}.${key}`, problem: 'must be a string' })
    }
    if (item.reason === 'tool_call' && typeof item.toolCallId !== 'string') {
      problems.push({ path: `${at}.toolCallId`, problem: 'is required for reason "tool_call"' })
    }
    // `expiresAt` is read leniently and an unreadable one means no expiry: never a problem
    // (docs/decisions.md#lenient-expiresat).
    for (const key of ['responseSchema', 'metadata'] as const) {
      if (item[key] !== undefined && !isRecord(item[key]))
        problems.push({ path: `${at}.${key}`, problem: 'must be an object' })
    }
  })
  return problems
}

/** Problems with an incoming event; an empty list means the consumer may rely on its fields. */
export function eventProblems(value: unknown): EventShapeProblem[] {
  if (!isRecord(value)) return [{ path: '', problem: 'event must be a JSON object' }]
  const type = value.type
  if (typeof type !== 'string') return [{ path: 'type', problem: 'must be a string' }]
  if (!KNOWN_TYPES.has(type)) return [] // unknown types are tolerated (and ignored) by consumers
  const problems: EventShapeProblem[] = []
  for (const key of REQUIRED_STRINGS[type as EventType] ?? []) {
    if (typeof value[key] !== 'string') problems.push({ path: key, problem: 'must be a string' })
  }
  if (type === EventType.RUN_FINISHED && value.outcome !== undefined) {
    const outcome = value.outcome
    if (!isRecord(outcome)) problems.push({ path: 'outcome', problem: 'must be an object' })
    else if (outcome.type === 'interrupt') problems.push(...interruptProblems(outcome.interrupts, 'outcome.interrupts'))
    else if (outcome.type === 'success') {
      const ids = outcome.pendingToolCallIds
      if (ids !== undefined && !(Array.isArray(ids) && ids.every((x) => typeof x === 'string'))) {
        problems.push({ path: 'outcome.pendingToolCallIds', problem: 'must be an array of strings' })
      }
    } else if (outcome.type !== 'cancelled') problems.push({ path: 'outcome.type', problem: 'unknown outcome' })
  }
  // Each message is read by id and role: a `null` or id-less entry from a foreign server must not reach the reducer.
  const messages = value.messages
  if (
    type === EventType.MESSAGES_SNAPSHOT &&
    !(
      Array.isArray(messages) &&
      messages.every(
        (m: { id?: unknown; role?: unknown } | null) => typeof m?.id === 'string' && typeof m.role === 'string',
      )
    )
  )
    problems.push({ path: 'messages', problem: 'must be an array' })
  if (type === EventType.STATE_DELTA && !Array.isArray(value.delta))
    problems.push({ path: 'delta', problem: 'must be an array' })
  if (type === EventType.TOOL_CALL_RESULT && typeof value.content !== 'string' && !Array.isArray(value.content)) {
    problems.push({ path: 'content', problem: 'must be a string or an array of parts' })
  }
  return problems
}

export function isKnownEventType(type: string): type is EventType {
  return KNOWN_TYPES.has(type)
}

export type { AgUiEvent, Interrupt }
