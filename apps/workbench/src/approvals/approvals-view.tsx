import type { DecisionsClient } from '@interlude/client'
import { cancelAll, createDecisionsClient } from '@interlude/client'
import type { PendingInterruptBatch, ResumeOptions } from '@interlude/react'
import { InterruptForm, useInterruptForm } from '@interlude/react'
import type { DecisionRecord, PendingBatch, ResumeEntry } from '@interlude/protocol'
import { STALE_INTERRUPT_REASON } from '@interlude/protocol'
import { useMemo, useState } from 'react'
import { readToken } from '../auth/session-token.ts'
import { useExpired } from '../live/expiry.ts'
import type { Recorder } from '../recording/recorder.ts'
import { createRecordingFetch } from '../recording/recording-fetch.ts'
import { toJson, toRecordedError } from '../recording/to-json.ts'
import { DecisionTrail } from '../ui/decision-trail.tsx'
import { MessageList } from '../ui/message-list.tsx'
import { decisionSummary, votesText } from './decision-summary.ts'
import { reconcileEffect } from './reconcile.ts'
import { UnknownEffects } from './unknown-effects.tsx'
import { batchKey, describeError, usePendingBatches } from './use-pending-batches.ts'
import { useThreadSnapshot } from './use-thread-snapshot.ts'

export interface ApprovalsViewProps {
  readonly recorder: Recorder
  /** False while hidden (the chat tab, or a replay): nothing is fetched then. */
  readonly active: boolean
}

const API = '/api/agent'

/** The decisions client of the workbench: the session's token (if any), else the cookie session. */
export function workbenchDecisionsClient(fetchImpl?: typeof fetch): DecisionsClient {
  return createDecisionsClient({
    baseUrl: API,
    token: () => readToken() as string,
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  })
}

const POLICY_TEXT = {
  deny: 'deny: at the deadline every approval is denied and the turn continues',
  cancel: 'cancel: at the deadline every answer is cancelled and the turn ends',
  keep: 'keep: the batch stays open after the deadline until it is closed',
} as const

/**
 * The Approvals view for deciders (docs/approvals.md): every batch this principal may decide, across owners,
 * answered with the same `<InterruptForm>` as the chat and sent through the decisions API. The selected thread is
 * read live (messages, the audit trail, unknown effects); a batch decided elsewhere leaves the list and says who
 * decided it.
 */
export function ApprovalsView({ recorder, active }: ApprovalsViewProps) {
  // Reads (the inbox, snapshots, polled) are not recorded; decisions and reconciliations are, like the chat's requests.
  const [reader] = useState(() => workbenchDecisionsClient())
  const [reconcileFetch] = useState(() => createRecordingFetch(recorder))
  const [actor] = useState(() => workbenchDecisionsClient(reconcileFetch))
  const inbox = usePendingBatches(reader, active)
  const [selected, setSelected] = useState<PendingBatch | undefined>()
  const [outcome, setOutcome] = useState<{ key: string; text: string; error?: boolean } | undefined>()
  const [sending, setSending] = useState(false)
  const thread = useThreadSnapshot(reader, selected?.threadId, active, selected?.owner)

  const selectedKey = selected === undefined ? undefined : batchKey(selected)
  // The selected batch as the inbox reads it now (its votes move on), while it awaits this principal.
  const current = selectedKey === undefined ? undefined : inbox.batches.find((b) => batchKey(b) === selectedKey)
  const stillPending = current !== undefined
  // Out of this principal's inbox but still open in the thread, under a policy that counts votes: it voted, and the
  // batch waits for the others. (A plain batch may still show open between two polls, or past its deadline.)
  const waitingForOthers = useMemo(() => {
    if (selected?.votes === undefined) return false
    const open = new Set(thread.snapshot?.interrupts?.map((i) => i.id))
    return selected.interrupts.some((i) => open.has(i.id))
  }, [selected, thread.snapshot])
  // The record that closed the selected batch, from the thread's audit trail (ours, another person's, a deadline's):
  // the last one on its interrupts, as under a policy earlier votes settle nothing; an escalation answers nothing.
  const closedBy: DecisionRecord | undefined = useMemo(() => {
    if (selected === undefined) return undefined
    const ids = new Set(selected.interrupts.map((i) => i.id))
    return thread.snapshot?.decisions?.findLast(
      (record) => record.entries.length > 0 && record.interruptIds.some((id) => ids.has(id)),
    )
  }, [selected, thread.snapshot])

  const decide = (batch: PendingBatch, resume: readonly ResumeEntry[], action: string) => {
    const key = batchKey(batch)
    setSending(true)
    recorder.addAction(action, { threadId: batch.threadId, entries: toJson(resume) })
    actor
      .decide(batch.threadId, { owner: batch.owner, resume })
      .then(({ runId, pending }) => {
        recorder.addAction(`${action}-accepted`, { threadId: batch.threadId, runId })
        // A vote that settles nothing (docs/approvals.md#organisation-policies): nothing runs yet.
        const text =
          pending === undefined
            ? `Sent (run ${runId}); the turn continues on the server.`
            : `Your vote is recorded; still needed: ${votesText(pending)}. Nothing runs until the others decide.`
        setOutcome({ key, text })
        inbox.refresh()
        thread.refresh()
      })
      .catch((reason: unknown) => {
        recorder.addAction(`${action}-refused`, { threadId: batch.threadId }, toRecordedError(reason))
        setOutcome({ key, text: describeError(reason), error: true })
        inbox.refresh()
        thread.refresh()
      })
      .finally(() => setSending(false))
  }

  return (
    <div className="approvals" data-testid="approvals-view">
      <aside className="threads" aria-label="Pending batches">
        <div className="threads-head">
          <h2>Waiting for a decision</h2>
          <button type="button" className="link" onClick={inbox.refresh} disabled={!active}>
            refresh
          </button>
        </div>
        {inbox.error !== undefined && (
          <p className="error" role="alert">
            {inbox.error}
          </p>
        )}
        {inbox.batches.length === 0 ? (
          <p className="muted" data-testid="approvals-empty">
            {inbox.loaded ? 'Nothing is waiting for you.' : 'Loading…'}
          </p>
        ) : (
          <ul className="inbox" aria-label="Batches you may decide">
            {inbox.batches.map((batch) => (
              <li key={batchKey(batch)}>
                <button
                  type="button"
                  className="inbox-item"
                  data-thread-id={batch.threadId}
                  aria-current={batchKey(batch) === selectedKey ? 'true' : undefined}
                  onClick={() => {
                    setSelected(batch)
                    setOutcome(undefined)
                  }}
                >
                  <span className="inbox-title">
                    {batch.title ?? batch.threadId}
                    {batch.interrupts.some((i) => i.reason === STALE_INTERRUPT_REASON) && (
                      <>
                        {' '}
                        <span className="badge" data-testid="stale-badge">
                          changed while waiting
                        </span>
                      </>
                    )}
                  </span>
                  <span className="muted">
                    {batch.owner} · {batch.interrupts.length} waiting · opened{' '}
                    {new Date(batch.openedAt).toLocaleTimeString()}
                    {Date.parse(batch.expiresAt) <= Date.now() ? ' · expired' : ''}
                    {batch.votes !== undefined && <span data-testid="inbox-votes"> · {votesText(batch.votes)}</span>}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
        {inbox.hasMore && (
          <button type="button" onClick={inbox.loadMore}>
            Load more
          </button>
        )}
      </aside>

      <main className="chat" aria-label="Selected batch">
        {selected === undefined ? (
          <p className="empty">Choose a batch to see its thread and answer it.</p>
        ) : (
          <>
            <header className="approval-head">
              <h2>{selected.title ?? selected.threadId}</h2>
              <p className="muted">
                Thread <code data-testid="approval-thread-id">{selected.threadId}</code> of{' '}
                <strong data-testid="approval-owner">{selected.owner}</strong> · opened{' '}
                {new Date(selected.openedAt).toLocaleString()}
              </p>
            </header>
            {thread.error !== undefined && <p className="error">{thread.error}</p>}
            <MessageList
              messages={thread.snapshot?.messages ?? []}
              awaitingToolCallIds={
                stillPending
                  ? new Set(
                      selected.interrupts.flatMap((i) => (typeof i.toolCallId === 'string' ? [i.toolCallId] : [])),
                    )
                  : new Set()
              }
              busy={thread.snapshot?.status === 'running'}
            />
            <DecisionTrail
              decisions={thread.snapshot?.decisions ?? []}
              label="Decisions on this thread"
              interruptLabels={new Map(selected.interrupts.map((i) => [i.id, i.message ?? i.id]))}
            />
            <UnknownEffects
              effects={thread.snapshot?.unsettledEffects ?? []}
              disabled={!active}
              onReconcile={(toolCallId, outcome) => {
                recorder.addAction('reconcile', { threadId: selected.threadId, toolCallId, outcome })
                return reconcileEffect(selected.threadId, toolCallId, outcome, reconcileFetch, selected.owner).then(
                  thread.refresh,
                )
              }}
            />
            {current !== undefined ? (
              <PendingBatchForm
                key={selectedKey}
                batch={current}
                disabled={sending || !active}
                onDecide={(resume, action) => decide(selected, resume, action)}
              />
            ) : (
              <p className="decided-elsewhere" role="status" data-testid="batch-closed">
                {waitingForOthers
                  ? 'Waiting for the other deciders: this batch no longer needs your vote.'
                  : closedBy !== undefined
                    ? `This batch is closed: ${decisionSummary(closedBy)}.`
                    : inbox.loaded
                      ? 'This batch is no longer waiting.'
                      : ''}
              </p>
            )}
            {outcome !== undefined && outcome.key === selectedKey && (
              <p
                className={outcome.error ? 'error' : 'muted'}
                role={outcome.error ? 'alert' : 'status'}
                data-testid="decision-outcome"
              >
                {outcome.text}
              </p>
            )}
          </>
        )}
      </main>
    </div>
  )
}

interface PendingBatchFormProps {
  readonly batch: PendingBatch
  readonly disabled: boolean
  readonly onDecide: (resume: readonly ResumeEntry[], action: string) => void
}

/** One batch of the inbox: the SDK's form while it can be answered; past its deadline, what its policy does. */
function PendingBatchForm({ batch, disabled, onDecide }: PendingBatchFormProps) {
  // The form's batch token is local, like the runtime's: the batch's identity in this list.
  const [formBatch] = useState<PendingInterruptBatch>(() => ({ id: batchKey(batch), interrupts: batch.interrupts }))
  const form = useInterruptForm(formBatch)
  const expiresAt = Date.parse(batch.expiresAt)
  const expired = useExpired(Number.isFinite(expiresAt) ? expiresAt : undefined)
  const policy = batch.onExpiry
  return (
    <section
      className="batch"
      aria-label="Batch to decide"
      data-expired={expired ? 'true' : 'false'}
      data-policy={policy}
    >
      <p className={expired ? 'error' : 'muted'} data-testid="approval-deadline">
        {expired ? 'Expired at ' : 'Answer before '}
        {new Date(expiresAt).toLocaleTimeString()} · policy {POLICY_TEXT[policy] ?? policy}
      </p>
      {batch.votes !== undefined && (
        <p className="muted" data-testid="approval-votes">
          Your answer is a vote: so far {votesText(batch.votes)}. Any denial denies.
        </p>
      )}
      {expired && policy === 'keep' ? (
        <div className="batch-actions">
          <p>
            Nobody answered in time. The thread waits until this batch is closed: closing cancels every answer (nothing
            runs) and the owner's conversation continues on the same thread.
          </p>
          <button
            type="button"
            className="primary"
            disabled={disabled}
            onClick={() => onDecide(cancelAll(batch), 'close-expired')}
          >
            Close the batch
          </button>
        </div>
      ) : (
        <InterruptForm
          batch={formBatch}
          form={form}
          disabled={disabled || expired}
          onSubmit={(resume: ResumeOptions) => onDecide(resume.entries, 'decide')}
          title={`${batch.owner}'s assistant is waiting for ${batch.interrupts.length === 1 ? 'an answer' : `${batch.interrupts.length} answers`}`}
        />
      )}
    </section>
  )
}
