/**
 * `@interlude/react/core`: the framework-free half of the client (no React import).
 */
export { ChatRuntime } from './chat-runtime.ts'
export { createHttpTransport } from './http-transport.ts'
export type { HttpTransportOptions } from './http-transport.ts'
export type { ConnectOptions, RunRequestOptions, Transport, TransportEvent } from './transport.ts'
export { applyEvents } from './assemble.ts'
export type { AssemblyResult } from './assemble.ts'
export type {
  BrowserTool,
  BrowserToolContext,
  ChatRuntimeOptions,
  ChatSnapshot,
  ChatStatus,
  ConnectionStatus,
  ConversationSnapshot,
  EventMeta,
  FinishInfo,
  InteractionOutcome,
  PendingInterruptBatch,
  ReconnectOptions,
  RecoverResult,
  RecoveryConfiguration,
  RecoveryState,
  RestoreOptions,
  ResumeOptions,
  RetryOptions,
  SendMessageInput,
} from './types.ts'
export { InterludeError } from '@interlude/protocol'
export type { ErrorCode, Interrupt, Message, ResumeEntry, ThreadSnapshot } from '@interlude/protocol'
export { CompletionInput } from './completion-input.ts'
export type { CompletionRuntime } from './completion-input.ts'
