import { InterludeError } from '@interlude/protocol'
import type { RunAgentInput } from '@interlude/protocol'
import { RunAgentInputSchema, summarizeIssues } from '@interlude/protocol/schemas'
import type { Limits } from './limits.ts'

/** Printable ASCII without spaces: safe in logs, SSE ids and URLs; long enough for any UUID scheme. */
const IDENTIFIER = /^[\x21-\x7e]{1,200}$/

/** Validates a parsed JSON body as `RunAgentInput` and applies the size limits. */
export function parseRunInput(body: unknown, limits: Limits): RunAgentInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InterludeError('INVALID_INPUT', 'The body must be a RunAgentInput JSON object.')
  }
  const parsed = RunAgentInputSchema.safeParse(body)
  if (!parsed.success) {
    throw new InterludeError('INVALID_INPUT', 'The body is not a valid RunAgentInput.', { details: { issues: summarizeIssues(parsed.error) } })
  }
  const input = parsed.data as RunAgentInput
  for (const field of ['threadId', 'runId'] as const) {
    if (!IDENTIFIER.test(input[field])) {
      throw new InterludeError('INVALID_INPUT', `${field} must be 1-200 printable ASCII characters without spaces.`, { details: { field } })
    }
  }
  if (input.messages.length > limits.maxMessagesPerInput) {
    throw new InterludeError('PAYLOAD_TOO_LARGE', `At most ${limits.maxMessagesPerInput} messages are accepted per input.`, {
      details: { limit: 'maxMessagesPerInput', max: limits.maxMessagesPerInput, actual: input.messages.length },
    })
  }
  const resume = input.resume
  if (resume !== undefined) {
    if (resume.length > limits.maxInterruptsPerBatch) {
      throw new InterludeError('INVALID_INPUT', `A resume has at most ${limits.maxInterruptsPerBatch} entries.`, {
        details: { limit: 'maxInterruptsPerBatch', max: limits.maxInterruptsPerBatch, actual: resume.length },
      })
    }
    for (const entry of resume) {
      if (entry.payload === undefined) continue
      const bytes = Buffer.byteLength(JSON.stringify(entry.payload) ?? '', 'utf8')
      if (bytes > limits.maxPayloadBytes) {
        throw new InterludeError('PAYLOAD_TOO_LARGE', `A resume payload is larger than ${limits.maxPayloadBytes} bytes.`, {
          details: { limit: 'maxPayloadBytes', max: limits.maxPayloadBytes, actual: bytes, interruptId: entry.interruptId },
        })
      }
    }
  }
  return input
}
