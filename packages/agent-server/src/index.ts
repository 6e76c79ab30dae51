// Public API of @interlude/agent-server: what an app needs to serve an agent, and what a custom store
// must implement. The demo agent is `@interlude/agent-server/demo`; the store conformance suite and the
// test harness are `@interlude/agent-server/testing`. Everything else is internal (docs/architecture.md).
export { createAgentServer } from './http/app.ts'
export type { AgentServer, AgentServerOptions } from './http/app.ts'
// Every setting's default, written once (config/defaults.ts); the options' docs refer to it.
export { SERVER_DEFAULTS } from './config/defaults.ts'
export type { ServerOptions } from './config/server-options.ts'
export type { ServerConfig } from './config/server-config.ts'
export type { WebhookDeliveryOptions } from './webhooks/webhook-sender.ts'
export type { CorsOptions } from './config/cors-options.ts'
export type { SlackOptions } from './config/outside-options.ts'
export type { AdmissionTurnsOptions } from './config/server-options.ts'
export type { WebhookEndpoint } from './webhooks/webhook-config.ts'
export { startServer } from './server.ts'
export type { RunningServer, StartServerOptions } from './server.ts'
export type { Clock } from './clock.ts'

export type { AgentDefinition, PausePolicy } from './agent/agent.ts'
export type { GuardrailContext, GuardrailDefinition, GuardrailResult } from './agent/guardrail.ts'
export { defineTool } from './agent/tool.ts'
export type {
  ApprovalPolicy,
  JsonSchema,
  PolicyContext,
  ReconcileContext,
  ReconcileResult,
  ToolContext,
  ToolDefinition,
} from './agent/tool.ts'
export { InterruptCancelledError } from './agent/tool-interrupt.ts'
export { defineSubagentTool } from './agent/subagent-tool.ts'
export type { SubagentToolOptions } from './agent/subagent-tool.ts'
export type { InterruptCancelledCode, ToolInterruptReason, ToolInterruptRequest } from './agent/tool-interrupt.ts'
export type { CanDecide, DecideContext } from './agent/decider.ts'
export { askUser } from './agent/ask-user.ts'
export type { GrantOption } from './agent/tool-grant.ts'
export type { AskUserOptions } from './agent/ask-user.ts'

export { anonymousSessionCookie, bearerTokens, generateSessionSecret } from './auth/authenticate.ts'
export type { AnonymousSessionOptions, Authenticate, Authenticated } from './auth/authenticate.ts'

export type { ModelChunk, ModelProvider, ModelRequest, ModelTool, ModelUsage } from './models/model.ts'
export type { UsageOptions, UsageReport } from './config/server-options.ts'
export { scriptedModel } from './models/scripted.ts'
export type { Script, ScriptedModelOptions, ScriptedResponse } from './models/scripted.ts'
export { openaiModel } from './models/openai.ts'
export type { OpenAIChatClient, OpenAIModelOptions } from './models/openai.ts'

export { DEFAULT_LIMITS, NO_PRINCIPAL_QUOTAS } from './config/limits.ts'
export type { Limits, QuotaName, QuotaRefusal } from './config/limits.ts'

export { createSqliteStore } from './store/sqlite/sqlite-store.ts'
export type { SqliteStoreOptions } from './store/sqlite/sqlite-store.ts'
export type { SqliteDatabase } from './store/sqlite/sqlite-database.ts'
export { createPostgresStore } from './store/postgres/postgres-store.ts'
export type { PostgresPool, PostgresPoolSettings, PostgresStoreOptions } from './store/postgres/postgres-store.ts'
// The Store contract: the interface, the error its fenced writes throw, and every type its methods use.
export { RunNotActiveError } from './store/store.ts'
export { SetupError } from './store/optional-peer.ts'
export { SqliteLockedError } from './store/sqlite/process-lock.ts'
// Threads are per owner (docs/decisions.md#threads-keyed-per-owner): the store knows a thread by
// `threadKey(owner, threadId)`, clients by their id.
export { clientThreadId, threadKey } from './store/thread-key.ts'
export type { ThreadKey } from './store/thread-key.ts'
export type {
  AbandonedRunsQuery,
  AdmissionView,
  BatchRecord,
  BatchStatus,
  BeginEffectResult,
  ClaimBatchRequest,
  ClaimBatchResult,
  ClaimOutboxRequest,
  CloseCall,
  DueBatchQuery,
  EventQuery,
  FinishRunRequest,
  InterruptKind,
  NewBatch,
  NewEvent,
  NewOutboxDelivery,
  NewToolCall,
  OutboxDelivery,
  OutboxFilter,
  OutboxSettlement,
  OutboxStatus,
  PendingBatchQuery,
  PendingBatchRecord,
  RunHeartbeat,
  RunKey,
  RunKind,
  RunRecord,
  RunStatus,
  SettleToolCallRequest,
  StartInputRunRequest,
  StartRunResult,
  Store,
  StoreChange,
  StoredEvent,
  StoredInterrupt,
  TakeOverRequest,
  ThreadHead,
  ThreadQuery,
  ThreadRecord,
  ToolCallKind,
  ToolCallRecord,
  ToolCallStatus,
} from './store/store.ts'
export type { GrantListQuery, GrantMatch, GrantStore, GrantTake } from './store/grants.ts'
