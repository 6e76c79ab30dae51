/**
 * `@interlude/protocol`: the contract shared by server and clients, named export by export (README "API").
 * The SSE codec is `@interlude/protocol/sse`; the zod boundary schemas are `@interlude/protocol/schemas`.
 */

// AG-UI 1.0, re-exported from @ag-ui/core.
export { EventType, PROTOCOL_VERSION } from './ag-ui.ts'
export type {
  AgUiEvent,
  AssistantMessage,
  BaseEvent,
  Context,
  CustomEvent,
  DeveloperMessage,
  Interrupt,
  JsonPatch,
  JsonPatchOperation,
  Message,
  MessagesSnapshotEvent,
  ResumeEntry,
  ResumeStatus,
  RunAgentInput,
  RunErrorEvent,
  RunFinishedCancelledOutcome,
  RunFinishedEvent,
  RunFinishedInterruptOutcome,
  RunFinishedOutcome,
  RunFinishedSuccessOutcome,
  RunStartedEvent,
  State,
  StateDeltaEvent,
  StateSnapshotEvent,
  StepFinishedEvent,
  StepStartedEvent,
  SystemMessage,
  TextMessageChunkEvent,
  TextMessageContentEvent,
  TextMessageEndEvent,
  TextMessageStartEvent,
  Tool,
  ToolCall,
  ToolCallArgsEvent,
  ToolCallChunkEvent,
  ToolCallEndEvent,
  ToolCallResultEvent,
  ToolCallStartEvent,
  ToolMessage,
  UserMessage,
} from './ag-ui.ts'

// Errors: the code table, the one error type, and the HTTP answer mapping.
export {
  ADMISSION_ERROR_CODES,
  ALSO_STREAM_ERROR_CODES,
  CLIENT_ERROR_CODES,
  ERROR_CODES,
  httpStatusOf,
  InterludeError,
  isErrorCode,
  isErrorEnvelope,
  MODEL_ERROR_KINDS,
  RUN_ERROR_CODES,
  STREAM_ERROR_CODES,
} from './errors.ts'
export type {
  AdmissionErrorCode,
  ClientErrorCode,
  ErrorCode,
  ErrorCodeInfo,
  ErrorEnvelope,
  InterludeErrorOptions,
  ModelErrorDetails,
  ModelErrorKind,
  RunErrorCode,
  StreamErrorCode,
  UsageLimitDetails,
} from './errors.ts'
export { errorFromFetch, errorFromResponse, errorFromStatus } from './http-errors.ts'

// Resume checks, decisions and their hash.
export { checkResume, checkResumeShape, resumeCheckError, resumeProblemCode } from './resume-checks.ts'
export type { ResumeCheckOptions, ResumeCheckResult, ResumeProblem, ResumeProblemKind } from './resume-checks.ts'
export { canonicalDecision, decisionHash, decisionOf } from './decision-hash.ts'
export { canonicalJson, isJsonValue, NonJsonValueError } from './canonical-json.ts'
export {
  DECISION_EVENT_NAME,
  DECISION_VIAS,
  REMEMBER_SCOPES,
  STALE_INTERRUPT_REASON,
  SYSTEM_ESCALATION_PRINCIPAL,
  SYSTEM_EXPIRY_PRINCIPAL,
  WEBHOOK_EVENT_TYPES,
} from './decisions.ts'
export type {
  DecisionAccepted,
  DecisionLink,
  DecisionLinkAction,
  DecisionOutcome,
  StaleMetadata,
  DecisionRecord,
  DecisionRequest,
  DecisionVia,
  ExpiryPolicy,
  InterruptExpiryPolicy,
  VoteTally,
  PendingBatch,
  PendingBatchPage,
  PermissionRule,
  RuleProvenance,
  PermissionRuleList,
  RememberScope,
  RunUsage,
  RunView,
  RunViewStatus,
  WebhookEventType,
  WebhookPayload,
} from './decisions.ts'
export type { Grant, GrantList, GrantRequest } from './grants.ts'

// Threads, time, light event checks, message text, multitask answers, subagents.
export type {
  AwaitingExternalCall,
  ExternalResultsSettled,
  SettledExternalResult,
  ThreadListPage,
  ThreadSnapshot,
  ThreadStatus,
  ThreadSummary,
  ToolCallClaimed,
  InterludeForwardedProps,
  UnsettledEffect,
} from './thread-snapshot.ts'
export type { ForkCreated, ForkPoint, ForkRequest, ThreadFork, ThreadForkList, ThreadParent } from './forks.ts'
export { isExpiredAt, isRfc3339, parseExpiresAt, parseRfc3339 } from './expires-at.ts'
export { eventProblems, interruptProblems, isKnownEventType, KNOWN_EVENT_TYPES } from './event-shape.ts'
export type { EventShapeProblem } from './event-shape.ts'
export { messageText } from './message-text.ts'
export { isRunAccepted, MULTITASK_STRATEGIES } from './multitask.ts'
export type { MultitaskStrategy, QueuedInputView, RunAccepted, RunQueued, RunSteered } from './multitask.ts'
export { SUBAGENT_EVENT_NAME } from './subagents.ts'
export type { SubagentEventValue, SubagentInterruptMetadata } from './subagents.ts'

// Guardrails and budgets (docs/guardrails.md).
export {
  BUDGET_INTERRUPT_REASON,
  GUARDRAIL_EVENT_NAME,
  GUARDRAIL_INTERRUPT_REASON,
  GUARDRAIL_ON,
  OUTCOME_REASONS,
} from './guardrails.ts'
export type {
  BudgetAnswer,
  BudgetKind,
  BudgetMetadata,
  GuardrailAction,
  GuardrailAnswer,
  GuardrailEvent,
  GuardrailMetadata,
  GuardrailOn,
  GuardrailOnFail,
  OutcomeReason,
  WithheldMessage,
} from './guardrails.ts'
