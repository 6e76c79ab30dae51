import { interruptProblems, isJsonValue } from '@interlude/protocol'

/**
 * Structural checks of a `ConversationSnapshot` before `restoreConversation` installs it (light,
 * without zod, like the protocol's event checks). Returns the first problem, or `undefined`.
 */

const STATUSES = new Set(['idle', 'running', 'interrupted'])

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const isString = (value: unknown): value is string => typeof value === 'string'
const isId = (value: unknown): value is string => isString(value) && value !== ''
const optional = (check: (value: unknown) => boolean) => (value: unknown) => value === undefined || check(value)
const isNonNegativeInteger = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0
const isParts = (value: unknown) =>
  isString(value) || (Array.isArray(value) && value.every((part) => isRecord(part) && isString(part.type)))
const isToolCall = (call: unknown) =>
  isRecord(call) &&
  isId(call.id) &&
  call.type === 'function' &&
  isRecord(call.function) &&
  isString(call.function.name) &&
  isString(call.function.arguments)

/** A field of a message, the check it must pass, and what it must be. */
type Rule = readonly [field: string, check: (value: unknown) => boolean, must: string]

const TEXT: Rule = ['content', isString, 'a string']
const PARTS: Rule = ['content', isParts, 'a string or an array of parts with a string type']

/** The AG-UI roles and the fields each needs (beyond `id`, `role` and an optional string `name`). */
const ROLES: Readonly<Record<string, readonly Rule[]>> = {
  developer: [TEXT],
  system: [TEXT],
  reasoning: [TEXT],
  user: [PARTS],
  assistant: [
    ['content', optional(isString), 'a string'],
    [
      'toolCalls',
      optional((calls) => Array.isArray(calls) && calls.every(isToolCall)),
      'an array of { id, type: "function", function: { name, arguments: string } }',
    ],
  ],
  tool: [['toolCallId', isId, 'a non-empty string'], ['error', optional(isString), 'a string'], PARTS],
  activity: [
    ['activityType', isString, 'a string'],
    ['content', isRecord, 'an object'],
  ],
}

function messageProblem(m: unknown, ids: Set<string>): string | undefined {
  if (!isRecord(m)) return ' must be an object'
  if (!isId(m.id)) return '.id must be a non-empty string'
  if (ids.has(m.id)) return '.id duplicates an earlier message id'
  ids.add(m.id)
  const rules = isString(m.role) && Object.hasOwn(ROLES, m.role) ? ROLES[m.role]! : undefined
  if (!rules) return '.role is not an AG-UI role'
  for (const [field, check, must] of [['name', optional(isString), 'a string'] as Rule, ...rules])
    if (!check(m[field])) return ` (${m.role}) ${field} must be ${must}`
  return undefined
}

export function snapshotProblem(snapshot: unknown, threadId: string): string | undefined {
  if (!isRecord(snapshot)) return 'not an object'
  if (snapshot.threadId !== threadId) return 'threadId does not match the current thread'
  if (!Array.isArray(snapshot.messages)) return 'messages must be an array'
  const ids = new Set<string>()
  for (let i = 0; i < snapshot.messages.length; i++) {
    const problem = messageProblem(snapshot.messages[i], ids)
    if (problem) return `messages[${i}]${problem}`
  }
  if (snapshot.state !== undefined && !isJsonValue(snapshot.state)) return 'state must be JSON'
  if (snapshot.revision !== undefined && !isNonNegativeInteger(snapshot.revision))
    return 'revision must be a non-negative integer'
  if (snapshot.status !== undefined && !STATUSES.has(snapshot.status as string)) return 'unknown status'
  if (!optional(isString)(snapshot.activeRunId)) return 'activeRunId must be a string'
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
