import { interruptProblems, isJsonValue } from '@interlude/protocol'

/**
 * Structural checks of a `ConversationSnapshot` before `restoreConversation` installs it (light,
 * without zod, like the protocol's event checks). Returns the first problem, or `undefined`.
 */

const ROLES = new Set(['developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning'])
const STATUSES = new Set(['idle', 'running', 'interrupted'])

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const isString = (value: unknown): value is string => typeof value === 'string'
const isOptionalString = (value: unknown) => value === undefined || isString(value)
const isNonNegativeInteger = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0

function contentPartsProblem(value: unknown): string | undefined {
  if (isString(value)) return undefined
  if (!Array.isArray(value)) return 'content must be a string or an array of parts'
  return value.every((part) => isRecord(part) && isString(part.type))
    ? undefined
    : 'every content part must be an object with a string type'
}

function toolCallProblem(call: unknown): string | undefined {
  if (!isRecord(call)) return 'must be an object'
  if (!isString(call.id) || call.id === '') return 'id must be a non-empty string'
  if (call.type !== 'function') return 'type must be "function"'
  if (!isRecord(call.function)) return 'function must be an object'
  if (!isString(call.function.name)) return 'function.name must be a string'
  if (!isString(call.function.arguments)) return 'function.arguments must be a string'
  return undefined
}

function messageProblem(m: Record<string, unknown>): string | undefined {
  if (!isOptionalString(m.name)) return 'name must be a string'
  switch (m.role) {
    case 'developer':
    case 'system':
    case 'reasoning':
      return isString(m.content) ? undefined : 'content must be a string'
    case 'user':
      return contentPartsProblem(m.content)
    case 'assistant': {
      if (!isOptionalString(m.content)) return 'content must be a string'
      if (m.toolCalls === undefined) return undefined
      if (!Array.isArray(m.toolCalls)) return 'toolCalls must be an array'
      for (let i = 0; i < m.toolCalls.length; i++) {
        const problem = toolCallProblem(m.toolCalls[i])
        if (problem) return `toolCalls[${i}] ${problem}`
      }
      return undefined
    }
    case 'tool':
      if (!isString(m.toolCallId) || m.toolCallId === '') return 'toolCallId must be a non-empty string'
      if (!isOptionalString(m.error)) return 'error must be a string'
      return contentPartsProblem(m.content)
    case 'activity':
      if (!isString(m.activityType)) return 'activityType must be a string'
      return isRecord(m.content) ? undefined : 'content must be an object'
    default:
      return 'role is not an AG-UI role'
  }
}

export function snapshotProblem(snapshot: unknown, threadId: string): string | undefined {
  if (!isRecord(snapshot)) return 'not an object'
  if (snapshot.threadId !== threadId) return 'threadId does not match the current thread'
  if (!Array.isArray(snapshot.messages)) return 'messages must be an array'
  const ids = new Set<string>()
  for (let i = 0; i < snapshot.messages.length; i++) {
    const m: unknown = snapshot.messages[i]
    if (!isRecord(m)) return `messages[${i}] must be an object`
    if (!isString(m.id) || m.id === '') return `messages[${i}].id must be a non-empty string`
    if (ids.has(m.id)) return `messages[${i}].id duplicates an earlier message id`
    ids.add(m.id)
    if (!isString(m.role) || !ROLES.has(m.role)) return `messages[${i}].role is not an AG-UI role`
    const problem = messageProblem(m)
    if (problem) return `messages[${i}] (${m.role}) ${problem}`
  }
  if (snapshot.state !== undefined && !isJsonValue(snapshot.state)) return 'state must be JSON'
  if (snapshot.revision !== undefined && !isNonNegativeInteger(snapshot.revision))
    return 'revision must be a non-negative integer'
  if (snapshot.status !== undefined && !STATUSES.has(snapshot.status as string)) return 'unknown status'
  if (!isOptionalString(snapshot.activeRunId)) return 'activeRunId must be a string'
  if (snapshot.lastEventId !== undefined && !isNonNegativeInteger(snapshot.lastEventId))
    return 'lastEventId must be a non-negative integer'
  if (snapshot.interrupts !== undefined && !(Array.isArray(snapshot.interrupts) && snapshot.interrupts.length === 0)) {
    const problems = interruptProblems(snapshot.interrupts)
    if (problems.length > 0) return `${problems[0]!.path} ${problems[0]!.problem}`
  }
  if (snapshot.unsettledEffects !== undefined) {
    const effects = snapshot.unsettledEffects
    const ok =
      Array.isArray(effects) &&
      effects.every((e) => isRecord(e) && isString(e.toolCallId) && isString(e.toolName) && e.status === 'unknown')
    if (!ok) return 'unsettledEffects must be an array of { toolCallId, toolName, status: "unknown" }'
  }
  return undefined
}
