import { InterludeError } from '@interlude/protocol'
import type { DecisionRequest } from '@interlude/protocol'
import { DecisionRequestSchema, summarizeIssues } from '@interlude/protocol/schemas'
import type { Limits } from './limits.ts'
import { checkIdentifier, checkResumeLimits } from './parse-input.ts'

/**
 * The body of `POST {base}/threads/:threadId/decisions` (docs/protocol.md): `{ runId, resume }` and nothing else,
 * with the id rule and the resume limits of `RunAgentInput`, so both channels refuse the same things the same way.
 */
export function parseDecisionRequest(body: unknown, limits: Limits): DecisionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InterludeError('INVALID_INPUT', 'The body must be a JSON object { runId, resume }.')
  }
  const parsed = DecisionRequestSchema.safeParse(body)
  if (!parsed.success) {
    throw new InterludeError('INVALID_INPUT', 'The body is not a valid decision request.', {
      details: { issues: summarizeIssues(parsed.error) },
    })
  }
  const request = parsed.data as DecisionRequest
  checkIdentifier('runId', request.runId)
  checkResumeLimits(request.resume, limits)
  return request
}
