import type { AgUiEvent, ThreadSnapshot } from '@interlude/protocol'
import { applyEvents } from './apply-events.ts'
import { offeredCalls } from './browser-tools.ts'
import type { ChatStore } from './chat-store.ts'
import { restoredAwaiting } from './external-calls.ts'
import { frozenJsonCopy } from './immutable.ts'
import type { Interactions } from './interactions.ts'
import type { ResolvedOptions } from './options.ts'
import type { QueuedInput } from './queued-input.ts'
import type { Action, CoreState } from './reducer.ts'
import type { ConversationSnapshot, PendingInterruptBatch, RecoverResult, RestoreOptions } from './types.ts'

/**
 * Installing a server-owned conversation (docs/react-runtime.md#restore-and-recovery), shared by `restoreConversation`,
 * `recover()` and the branch commands, which install the snapshot of the thread they switch to.
 */

/**
 * The `conversation/restored` action of a checked snapshot: its messages and state, its interrupts as a fresh local
 * batch, without network or tool execution.
 */
export function restoredAction(
  s: CoreState,
  snapshot: ConversationSnapshot,
  options: ResolvedOptions<unknown>,
): Extract<Action, { type: 'conversation/restored' }> {
  const installed = applyEvents(s.messages, s.state, [
    { type: 'MESSAGES_SNAPSHOT', messages: snapshot.messages } as AgUiEvent,
    { type: 'STATE_SNAPSHOT', snapshot: snapshot.state === undefined ? s.state : snapshot.state } as AgUiEvent,
  ])
  const interrupts =
    snapshot.interrupts && snapshot.interrupts.length > 0 ? frozenJsonCopy(snapshot.interrupts) : undefined
  const batch: PendingInterruptBatch | undefined = interrupts
    ? Object.freeze({ id: options.generateId(), interrupts: Object.freeze(interrupts) })
    : undefined
  return {
    type: 'conversation/restored',
    messages: installed.messages,
    state: installed.state,
    batch,
    lastEventId: snapshot.lastEventId === undefined ? s.lastEventId : String(snapshot.lastEventId),
    unsettledEffects: snapshot.unsettledEffects === undefined ? undefined : frozenJsonCopy(snapshot.unsettledEffects),
    decisions: snapshot.decisions && Object.freeze(frozenJsonCopy(snapshot.decisions)),
    // An idle server thread may still wait for results of browser calls (a cold reload): offered, never run unasked.
    toolCalls: snapshot.status === 'idle' ? offeredCalls(options.tools, installed.messages) : [],
    awaitingExternal: restoredAwaiting(snapshot.awaitingExternal),
  }
}

/** What installing a fetched thread needs from its runtime. */
export interface InstallHost {
  readonly store: ChatStore<unknown>
  readonly interactions: Interactions<unknown>
  readonly queue: QueuedInput
  /** `restoreConversation`: its checks, then `restoredAction`. */
  readonly restore: (snapshot: ConversationSnapshot, options: RestoreOptions) => void
}

/**
 * Installs the fetched snapshot of the current thread, captured at `revision`: restore and queue in one commit (inside
 * the caller's transaction, if any), then a running thread is re-attached to its live run — its events from the start
 * of the thread log, earlier runs skipped, applied idempotently over the restored messages — and an idle one drains
 * its queue (an interrupted thread waits for its batch instead).
 */
export function installThread(host: InstallHost, snapshot: ThreadSnapshot, revision: number): RecoverResult {
  host.store.transaction(() => {
    host.restore(snapshot, { expectedRevision: revision })
    host.queue.restore(snapshot)
  })
  if (snapshot.status === 'running' && typeof snapshot.activeRunId === 'string') {
    void host.interactions.start({ kind: 'attach', runId: snapshot.activeRunId })
    return { snapshot, attached: true }
  }
  host.queue.drain()
  return { snapshot, attached: false }
}
