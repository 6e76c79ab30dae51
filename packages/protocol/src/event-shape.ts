import type { Event as AgUiEvent, EventType, Interrupt } from '@ag-ui/core'

/**
 * Light structural checks for incoming AG-UI events, without zod, so that a browser bundle stays
 * small (the full zod validators of `@ag-ui/core/schemas` are ~50 KB gzipped and live in
 * `@interlude/protocol/schemas` for servers and tests). They check what a consumer relies on:
 * the discriminator and the identifiers/strings each event type needs.
 */

/**
 * AG-UI 1.0's event types (`Object.values(EventType)` of `@ag-ui/core`; `event-shape.test.ts` keeps the two equal),
 * as one string: the enum object would cost the browser bundle twice the bytes.
 */
export const KNOWN_EVENT_TYPES: readonly EventType[] = /* @__PURE__ */ (
  'TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END TEXT_MESSAGE_CHUNK TOOL_CALL_START TOOL_CALL_ARGS ' +
  'TOOL_CALL_END TOOL_CALL_CHUNK TOOL_CALL_RESULT STATE_SNAPSHOT STATE_DELTA MESSAGES_SNAPSHOT ACTIVITY_SNAPSHOT ' +
  'ACTIVITY_DELTA RAW CUSTOM RUN_STARTED RUN_FINISHED RUN_ERROR STEP_STARTED STEP_FINISHED REASONING_START ' +
  'REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_MESSAGE_CHUNK REASONING_END ' +
  'REASONING_ENCRYPTED_VALUE SUBAGENT_STARTED SUBAGENT_FINISHED SUBAGENT_ERROR'
).split(' ') as EventType[]

// Pure: a bundle that only checks events (eventProblems) leaves the list out.
const KNOWN_TYPES = /* @__PURE__ */ new Set<string>(KNOWN_EVENT_TYPES)

const REQUIRED_STRINGS: Partial<Record<`${EventType}`, readonly string[]>> = {
  RUN_STARTED: ['threadId', 'runId'],
  RUN_FINISHED: ['threadId', 'runId'],
  RUN_ERROR: ['message'],
  TEXT_MESSAGE_START: ['messageId'],
  TEXT_MESSAGE_CONTENT: ['messageId', 'delta'],
  TEXT_MESSAGE_END: ['messageId'],
  TOOL_CALL_START: ['toolCallId', 'toolCallName'],
  TOOL_CALL_ARGS: ['toolCallId', 'delta'],
  TOOL_CALL_END: ['toolCallId'],
  TOOL_CALL_RESULT: ['messageId', 'toolCallId'],
  STEP_STARTED: ['stepName'],
  STEP_FINISHED: ['stepName'],
  CUSTOM: ['name'],
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
  // Every check below names its type, so unknown types pass (consumers ignore them, as AG-UI requires).
  const problems: EventShapeProblem[] = []
  for (const key of (Object.hasOwn(REQUIRED_STRINGS, type) && REQUIRED_STRINGS[type as `${EventType}`]) || []) {
    if (typeof value[key] !== 'string') problems.push({ path: key, problem: 'must be a string' })
  }
  if (type === 'RUN_FINISHED' && value.outcome !== undefined) {
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
    type === 'MESSAGES_SNAPSHOT' &&
    !(
      Array.isArray(messages) &&
      messages.every(
        (m: { id?: unknown; role?: unknown } | null) => typeof m?.id === 'string' && typeof m.role === 'string',
      )
    )
  )
    problems.push({ path: 'messages', problem: 'must be an array' })
  if (type === 'STATE_DELTA' && !Array.isArray(value.delta))
    problems.push({ path: 'delta', problem: 'must be an array' })
  if (type === 'TOOL_CALL_RESULT' && typeof value.content !== 'string' && !Array.isArray(value.content)) {
    problems.push({ path: 'content', problem: 'must be a string or an array of parts' })
  }
  return problems
}

export function isKnownEventType(type: string): type is EventType {
  return KNOWN_TYPES.has(type)
}

export type { AgUiEvent, Interrupt }
