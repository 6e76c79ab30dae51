import { InterludeError } from '@interlude/protocol'
import type { Message, ResumeEntry, RunAgentInput } from '@interlude/protocol'
import { RunAgentInputSchema, summarizeIssues } from '@interlude/protocol/schemas'
import type { ZodType } from 'zod'
import type { Limits } from '../../config/limits.ts'

/** Printable ASCII without spaces: safe in logs, SSE ids and URLs; long enough for any UUID scheme. */
const IDENTIFIER = /^[\x21-\x7e]{1,200}$/

type Loose = Record<string, unknown>

/** Copies the listed keys that are present (AG-UI's schemas are loose: anything else is dropped). */
function pick(source: Loose, keys: readonly string[]): Loose {
  const out: Loose = {}
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key]
  return out
}

function contentPart(part: Loose): Loose {
  if (part.type === 'text') return pick(part, ['type', 'id', 'text'])
  const picked = pick(part, ['type', 'id'])
  picked.source = pick(part.source as Loose, ['type', 'value', 'mimeType', 'provider'])
  return picked
}

function content(value: unknown): unknown {
  return Array.isArray(value) ? value.map((part) => contentPart(part as Loose)) : value
}

/**
 * Only the AG-UI fields of each role survive (docs/protocol.md: history is server-owned). Unknown keys,
 * `metadata`, `encryptedValue` and `subagentRunId` are dropped, so nothing a client invents is
 * stored or echoed back (e.g. `toolCalls` on a user message).
 */
export function sanitizeMessage(message: Message): Message {
  const m = message as unknown as Loose
  switch (message.role) {
    case 'user':
      return { ...pick(m, ['id', 'role', 'name']), content: content(m.content) } as Message
    case 'tool':
      return { ...pick(m, ['id', 'role', 'toolCallId', 'error']), content: content(m.content) } as Message
    case 'assistant': {
      const out = pick(m, ['id', 'role', 'name', 'content'])
      if (Array.isArray(m.toolCalls)) {
        out.toolCalls = (m.toolCalls as Loose[]).map((call) => ({
          ...pick(call, ['id', 'type']),
          function: pick(call.function as Loose, ['name', 'arguments']),
        }))
      }
      return out as Message
    }
    case 'system':
    case 'developer':
      return pick(m, ['id', 'role', 'name', 'content']) as Message
    case 'activity':
      return pick(m, ['id', 'role', 'activityType', 'content']) as Message
    default:
      return pick(m, ['id', 'role', 'content']) as Message
  }
}

/**
 * Validates a parsed JSON body as `RunAgentInput`, keeps only the AG-UI fields of each message and
 * applies the limits that do not depend on the thread (the count and size of *new* messages are
 * checked at admission, where the thread's history is known).
 */
export function parseRunInput(body: unknown, limits: Limits): RunAgentInput {
  const input = { ...parseBody<RunAgentInput>(RunAgentInputSchema, body, 'RunAgentInput') }
  for (const field of ['threadId', 'runId'] as const) checkIdentifier(field, input[field])
  input.messages = input.messages.map(sanitizeMessage)
  checkMessageIds(input.messages)
  if (input.resume !== undefined) {
    checkEntryIds(input.resume)
    checkResumeLimits(input.resume, limits)
  }
  return input
}

/** A JSON object body checked against a zod schema; `INVALID_INPUT` with the issues otherwise. */
export function parseBody<T>(schema: ZodType, body: unknown, name: string): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InterludeError('INVALID_INPUT', `The body must be a ${name} JSON object.`)
  }
  const parsed = schema.safeParse(body)
  if (!parsed.success) {
    throw new InterludeError('INVALID_INPUT', `The body is not a valid ${name}.`, {
      details: { issues: summarizeIssues(parsed.error) },
    })
  }
  return parsed.data as T
}

/** `threadId` / `runId` (body fields or path parameters): 1-200 printable ASCII characters without spaces. */
export function checkIdentifier(field: string, value: string): string {
  if (!IDENTIFIER.test(value)) {
    throw new InterludeError('INVALID_INPUT', `${field} must be 1-200 printable ASCII characters without spaces.`, {
      details: { field },
    })
  }
  return value
}

/**
 * Opaque ids the client chooses (message, tool call and interrupt ids) may be any string except one with U+0000:
 * PostgreSQL cannot store it in a text column, and both stores must refuse the same ids the same way (docs/decisions.md#operating-it).
 */
export function checkOpaqueId(field: string, value: string): string {
  if (value.includes('\u0000')) {
    throw new InterludeError('INVALID_INPUT', `${field} must not contain U+0000.`, { details: { field } })
  }
  return value
}

function checkMessageIds(messages: readonly Message[]): void {
  for (const message of messages) {
    checkOpaqueId('messages[].id', message.id)
    const m = message as { toolCallId?: unknown; toolCalls?: { id?: unknown }[] }
    if (typeof m.toolCallId === 'string') checkOpaqueId('messages[].toolCallId', m.toolCallId)
    for (const call of m.toolCalls ?? []) if (typeof call.id === 'string') checkOpaqueId('toolCalls[].id', call.id)
  }
}

/** Each resume entry's `interruptId` (see `checkOpaqueId`). */
export function checkEntryIds(resume: readonly ResumeEntry[]): void {
  for (const entry of resume) checkOpaqueId('resume[].interruptId', entry.interruptId)
}

/** The limits of a decision that do not depend on the batch: the number of entries and each payload's size. */
export function checkResumeLimits(
  resume: readonly ResumeEntry[],
  limits: Pick<Limits, 'maxInterruptsPerBatch' | 'maxPayloadBytes'>,
): void {
  if (resume.length > limits.maxInterruptsPerBatch) {
    throw new InterludeError('INVALID_INPUT', `A resume has at most ${limits.maxInterruptsPerBatch} entries.`, {
      details: { limit: 'maxInterruptsPerBatch', max: limits.maxInterruptsPerBatch, actual: resume.length },
    })
  }
  for (const entry of resume) {
    if (entry.payload === undefined) continue
    const bytes = Buffer.byteLength(JSON.stringify(entry.payload) ?? '', 'utf8')
    if (bytes > limits.maxPayloadBytes) {
      throw new InterludeError(
        'PAYLOAD_TOO_LARGE',
        `A resume payload is larger than ${limits.maxPayloadBytes} bytes.`,
        {
          details: {
            limit: 'maxPayloadBytes',
            max: limits.maxPayloadBytes,
            actual: bytes,
            interruptId: entry.interruptId,
          },
        },
      )
    }
  }
}
