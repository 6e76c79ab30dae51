import type { DecisionRequest } from '@interlude/protocol'
import { DecisionRequestSchema } from '@interlude/protocol/schemas'
import type { Limits } from '../../config/limits.ts'
import { checkEntryIds, checkIdentifier, checkResumeLimits, parseBody } from './parse-input.ts'

/**
 * The body of `POST {base}/threads/:threadId/decisions` (docs/protocol.md): `{ runId, resume }` and nothing else,
 * with the id rule and the resume limits of `RunAgentInput`, so both channels refuse the same things the same way.
 */
export function parseDecisionRequest(body: unknown, limits: Limits): DecisionRequest {
  const request = parseBody<DecisionRequest>(DecisionRequestSchema, body, 'DecisionRequest { runId, resume }')
  checkIdentifier('runId', request.runId)
  checkEntryIds(request.resume)
  checkResumeLimits(request.resume, limits)
  return request
}
