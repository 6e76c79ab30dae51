/**
 * zod validators for the wire boundary. A separate entry (`@interlude/protocol/schemas`) because
 * zod is large: servers and tests import it; browser bundles use the light checks of the main entry.
 * AG-UI's own schemas come from `@ag-ui/core/schemas`; Interlude adds only its own shapes.
 */
import {
  EventSchema,
  InterruptSchema,
  MessageSchema,
  ResumeEntrySchema,
  RunAgentInputSchema,
} from '@ag-ui/core/schemas'
import { z } from 'zod'
import { DECISION_VIAS } from './decisions.ts'
import { ADMISSION_ERROR_CODES, CLIENT_ERROR_CODES, STREAM_ERROR_CODES } from './errors.ts'
import { isRfc3339 } from './expires-at.ts'

export { EventSchema, InterruptSchema, MessageSchema, ResumeEntrySchema, RunAgentInputSchema }

export const ErrorCodeSchema = z.enum([...ADMISSION_ERROR_CODES, ...STREAM_ERROR_CODES, ...CLIENT_ERROR_CODES])

export const ErrorEnvelopeSchema = z.object({
  error: z.object({ code: ErrorCodeSchema, message: z.string(), details: z.unknown().optional() }),
})

/** An interrupt as Interlude servers emit it: AG-UI's shape plus a strict RFC 3339 `expiresAt`. */
export const StrictInterruptSchema = InterruptSchema.refine(
  (i) => i.expiresAt === undefined || isRfc3339(i.expiresAt),
  {
    message: 'expiresAt must be RFC 3339 with Z or an offset',
    path: ['expiresAt'],
  },
)

export const ThreadSnapshotSchema = z.object({
  threadId: z.string().min(1),
  revision: z.number().int().nonnegative(),
  status: z.enum(['idle', 'running', 'interrupted']),
  messages: z.array(MessageSchema),
  state: z.unknown(),
  interrupts: z.array(StrictInterruptSchema).min(1).optional(),
  batchId: z.string().min(1).optional(),
  parent: z.lazy(() => ThreadParentSchema).optional(),
  withheld: z
    .array(
      z.object({
        messageId: z.string(),
        interruptId: z.string(),
        guardrail: z.string(),
        reason: z.string(),
        content: z.string(),
      }),
    )
    .optional(),
  activeRunId: z.string().optional(),
  lastEventId: z.number().int().nonnegative(),
  unsettledEffects: z
    .array(z.object({ toolCallId: z.string(), toolName: z.string(), status: z.literal('unknown') }))
    .optional(),
  decisions: z.array(z.lazy(() => DecisionRecordSchema)).optional(),
  // Paged messages (docs/protocol.md#threadsnapshot): `messages` is the newest page; older pages via
  // `?before=<messagesCursor>`.
  hasMoreMessages: z.boolean().optional(),
  messagesCursor: z.string().min(1).optional(),
  messageCount: z.number().int().nonnegative().optional(),
  queued: z
    .array(
      z.object({
        runId: z.string().min(1),
        position: z.number().int().positive(),
        steer: z.boolean(),
        message: MessageSchema,
      }),
    )
    .optional(),
})

export const DecisionRecordSchema = z.object({
  threadId: z.string().min(1),
  runId: z.string().min(1),
  batchId: z.string().min(1).optional(),
  interruptIds: z.array(z.string()),
  entries: z.array(ResumeEntrySchema),
  decidedBy: z.string().min(1),
  via: z.enum(DECISION_VIAS),
  at: z.string().refine(isRfc3339, 'at must be RFC 3339'),
  ruleId: z.string().min(1).optional(),
  grantId: z.string().min(1).optional(),
  toolCallId: z.string().min(1).optional(),
  outcome: z.enum(['stale']).optional(),
  staleInterruptIds: z.array(z.string()).optional(),
  vote: z.literal(true).optional(),
  stage: z.number().int().nonnegative().optional(),
})

/** Body of `POST {base}/threads/:threadId/decisions`; ids are checked like `RunAgentInput`'s. */
export const DecisionRequestSchema = z
  .object({ runId: z.string().min(1), resume: z.array(ResumeEntrySchema).min(1) })
  .strict()

/** Where a fork starts (docs/time-travel.md): exactly one of `messageId`, `batchId`. */
export const ForkPointSchema = z.union([
  z.object({ messageId: z.string().min(1).max(200) }).strict(),
  z.object({ batchId: z.string().min(1).max(200) }).strict(),
])

/** Body of `POST {base}/threads/:threadId/fork`. */
export const ForkRequestSchema = z
  .object({
    at: ForkPointSchema,
    threadId: z.string().min(1).max(200).optional(),
    edit: z
      .object({ messageId: z.string().min(1).max(200), content: z.string() })
      .strict()
      .optional(),
  })
  .strict()

export const ThreadParentSchema = z.object({ threadId: z.string().min(1), at: ForkPointSchema })

/** `201` answer of the fork route. */
export const ForkCreatedSchema = z.object({ threadId: z.string().min(1), parent: ThreadParentSchema })

/** `202` answers of `POST {base}/runs` (docs/protocol.md#multitask): queued input, or a steer that joined a run. */
export const RunQueuedSchema = z.object({
  threadId: z.string().min(1),
  runId: z.string().min(1),
  queued: z.number().int().positive(),
})
export const RunSteeredSchema = z.object({
  threadId: z.string().min(1),
  runId: z.string().min(1),
  steered: z.literal(true),
})
export const RunAcceptedSchema = z.union([RunQueuedSchema, RunSteeredSchema])

export type ZodIssueSummary = { path: string; message: string }

/** Flattens zod issues into `{ path, message }` pairs suitable for an error envelope's details. */
export function summarizeIssues(error: z.ZodError): ZodIssueSummary[] {
  return error.issues.slice(0, 20).map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }))
}
