import type { RecordedBatch, SnapshotProjection } from './recording-types.ts'
import { toJson, toRecordedError } from './to-json.ts'

/**
 * The fields of a `useChat` snapshot that a recording keeps. Written structurally (not against
 * the SDK's type) so that the recording format does not change when the SDK adds fields.
 */
export interface ChatSnapshotLike {
  readonly threadId: string
  readonly status?: string
  readonly connection?: string
  readonly isLoading: boolean
  readonly isResuming: boolean
  readonly runId?: string | undefined
  readonly messages: readonly unknown[]
  readonly state: unknown
  readonly pendingInterrupts: { readonly id: string; readonly interrupts: readonly unknown[] } | undefined
  readonly error: unknown
  readonly recovery: { readonly revision: number; readonly required: boolean }
  readonly unsettledEffects?: readonly unknown[] | undefined
  /** `useChat().decisions`, where the SDK has it. */
  readonly decisions?: readonly unknown[] | undefined
}

export function projectSnapshot(chat: ChatSnapshotLike): SnapshotProjection {
  const batch: RecordedBatch | null = chat.pendingInterrupts
    ? { id: chat.pendingInterrupts.id, interrupts: chat.pendingInterrupts.interrupts.map((item) => toJson(item)) }
    : null
  return {
    threadId: chat.threadId,
    status: chat.status ?? (chat.isLoading ? 'running' : 'idle'),
    connection: chat.connection ?? 'idle',
    isLoading: chat.isLoading,
    isResuming: chat.isResuming,
    runId: chat.runId ?? null,
    messages: chat.messages.map((message) => toJson(message)),
    state: toJson(chat.state),
    pendingInterrupts: batch,
    error: chat.error === undefined || chat.error === null ? null : toRecordedError(chat.error),
    recovery: { revision: chat.recovery.revision, required: chat.recovery.required },
    unsettledEffects: (chat.unsettledEffects ?? []).map((item) => toJson(item)),
    ...(chat.decisions === undefined ? {} : { decisions: chat.decisions.map((item) => toJson(item)) }),
  }
}
