/**
 * `@interlude/react/core`: the framework-free half of the client (no React import). Only the
 * runtime, the transport contract and the public types; the modules behind them stay internal
 * (docs/react-runtime.md#modules).
 */
export { ChatRuntime } from './chat-runtime.ts'
export { createHttpTransport } from './http-transport.ts'
export { applyEvents } from './apply-events.ts'
export { messageText } from '@interlude/protocol'
export type { AwaitingExternalCall } from '@interlude/protocol'
export type { HttpTransportOptions } from './http-transport.ts'
export type { Endpoint, EndpointParams, Endpoints } from './endpoints.ts'
export type { ServerMode } from './server-features.ts'
export { groupInterruptsBySubagent } from './subagent-groups.ts'
export type { InterruptGroup } from './subagent-groups.ts'
export { SUBAGENT_EVENT_NAME, SUBAGENT_MESSAGE_LIMIT, SUBAGENT_RUN_LIMIT } from './subagent-activity.ts'
export type { SubagentActivities, SubagentActivity, SubagentStatus } from './subagent-activity.ts'
export { subagentsByToolCall, subagentText, subagentToolCalls } from './subagent-view.ts'
export type { SubagentToolCall } from './subagent-view.ts'
export { EarlierMessages } from './earlier-messages.ts'
export type { EarlierFrom, EarlierMessagesSnapshot, EarlierSource } from './earlier-messages.ts'
export type { ConnectOptions, RunRequestOptions, SubmitAnswer, Transport, TransportEvent } from './transport.ts'
export type {
  BranchPoint,
  BrowserTool,
  BrowserToolContext,
  ChatBranches,
  ChatRuntimeOptions,
  ChatSnapshot,
  ChatStatus,
  ConnectionStatus,
  ConversationSnapshot,
  EventMeta,
  FinishInfo,
  InteractionOutcome,
  PendingInterruptBatch,
  PendingToolCall,
  QueuedMessage,
  QueueStorage,
  ReconcileEffectOptions,
  ReconnectOptions,
  RecoverResult,
  RecoveryConfiguration,
  RecoveryState,
  RestoreOptions,
  ResumeOptions,
  RetryOptions,
  SendMessageInput,
  SendOptions,
  SettleToolCallsOptions,
  WhileBusy,
} from './types.ts'
export { InterludeError } from '@interlude/protocol'
export type {
  DecisionRecord,
  ErrorCode,
  ForkPoint,
  Interrupt,
  Message,
  ResumeEntry,
  ThreadParent,
  ThreadSnapshot,
} from '@interlude/protocol'
