// Public API of @interlude/agent-server.
export { createAgentServer } from './http/app.ts'
export type { AgentServer, AgentServerOptions } from './http/app.ts'
export { isPostgresUrl, startServer } from './server.ts'
export type { RunningServer, StartServerOptions } from './server.ts'

export type { AgentDefinition } from './agent/agent.ts'
export { defineTool, approvalResponseSchema, toJsonSchema } from './agent/tool.ts'
export type {
  ApprovalPolicy,
  JsonSchema,
  PolicyContext,
  ReconcileContext,
  ReconcileResult,
  ToolContext,
  ToolDefinition,
} from './agent/tool.ts'
export { askUser } from './agent/ask-user.ts'
export type { AskUserOptions } from './agent/ask-user.ts'

export { anonymousSessionCookie, bearerTokens, generateSessionSecret } from './auth/authenticate.ts'
export type { AnonymousSessionOptions, Authenticate, Authenticated } from './auth/authenticate.ts'

export type { ModelChunk, ModelProvider, ModelRequest, ModelTool } from './models/model.ts'
export { scriptedModel, tokenize } from './models/scripted.ts'
export type { Script, ScriptedModelOptions, ScriptedResponse } from './models/scripted.ts'
export { openaiModel, toOpenAIMessages } from './models/openai.ts'
export type { OpenAIModelOptions } from './models/openai.ts'

export { releaseAssistant, releaseAssistantScript, ENVIRONMENT_CHOICE_SCHEMA } from './demo/release-assistant.ts'
export type { ReleaseAssistantOptions, ReleaseState } from './demo/release-assistant.ts'

export { createSqliteStore, SqliteStore } from './store/sqlite/sqlite-store.ts'
export type { SqliteStoreOptions } from './store/sqlite/sqlite-store.ts'
export { createPostgresStore, PostgresStore } from './store/postgres/postgres-store.ts'
export type { PostgresStoreOptions } from './store/postgres/postgres-store.ts'
export { RunNotActiveError } from './store/store.ts'
export type * from './store/store.ts'

export { DEFAULT_LIMITS } from './core/limits.ts'
export type { Limits } from './core/limits.ts'
export { executeRun } from './core/execute-run.ts'
export type { ExecutionDeps } from './core/execute-run.ts'
export type { RunPlan, InputRunPlan, ResumeRunPlan } from './core/run-plan.ts'
export { ValidatorCache } from './schema/validator-cache.ts'
