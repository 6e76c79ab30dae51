import { groupInterruptsBySubagent, InterruptForm, InterruptFormProvider, useInterruptForm } from '@interlude/react'
import type { InterruptDrafts, InterruptRenderers, ResumeOptions, UseInterruptFormResult } from '@interlude/react'
import type { InterludeError } from '@interlude/protocol'
import { useCallback, useEffect, useRef, useState } from 'react'
import { UnknownEffects } from '../approvals/unknown-effects.tsx'
import { AwaitingExternal } from './awaiting-external.tsx'
import { BranchActions } from './branch-actions.tsx'
import { DeployCard } from './deploy-card.tsx'
import { DecisionTrail } from '../ui/decision-trail.tsx'
import type { Recorder } from '../recording/recorder.ts'
import type { Json } from '../recording/recording-types.ts'
import { toJson, toRecordedError } from '../recording/to-json.ts'
import { MessageList } from '../ui/message-list.tsx'
import { BatchDeadline } from './batch-deadline.tsx'
import { BrowserWorkOffer } from './browser-work-offer.tsx'
import { batchPolicy, earliestExpiry, useExpired } from './expiry.ts'
import { draftChoices } from './draft-choices.ts'
import { threadFromUrl, writeThreadToUrl } from './thread-url.ts'
import { ThreadSidebar } from './thread-sidebar.tsx'
import { Composer } from './composer.tsx'
import { QueuePanel } from './queue-panel.tsx'
import { useInbox } from './use-inbox.ts'
import { useRecordedChat } from './use-recorded-chat.ts'

export interface LiveViewProps {
  readonly recorder: Recorder
  /** False while the replay is shown: nothing in the live view fetches then. */
  readonly active: boolean
}

/** Tools answered by the workbench's own card at their call when "Deploy card" is on. */
const CARDS: InterruptRenderers = { deploy: DeployCard }
const CARD_TOOLS: ReadonlySet<string> = new Set(Object.keys(CARDS))
const NO_CARDS: InterruptRenderers = {}

export function LiveView({ recorder, active }: LiveViewProps) {
  const [initialThread] = useState(threadFromUrl)
  const { chat, decisions, addDecisions } = useRecordedChat(recorder, initialThread)
  const { runtime } = chat
  const [draft, setDraft] = useState('')
  const [localError, setLocalError] = useState<string | undefined>()
  const [recovering, setRecovering] = useState(false)
  // Browser work another tab claimed first (TOOL_CALL_CLAIMED): shown as taken until the winner's results arrive.
  const [taken, setTaken] = useState<string | undefined>()
  // The server says the thread is paused but shows no batch: its questions passed their deadline and the server is
  // about to apply their policy (docs/approvals.md#deadlines: deny or cancel, then the turn goes on). Nothing is
  // stranded; the page reads the thread again shortly. Kept per thread id, so another thread clears it.
  const [expiringThread, setExpiringThread] = useState<string | undefined>()
  // The deploy approval as a card at its tool call (a custom renderer shown inline) instead of in the batch form.
  const [cards, setCards] = useState(false)
  const recoveredFor = useRef<string | undefined>(undefined)
  const lastChoices = useRef<string | undefined>(undefined)

  const batch = chat.pendingInterrupts
  // The form state lives here (controlled <InterruptForm>): the recorder reads the drafts directly.
  const form = useInterruptForm(batch, { messages: chat.messages })
  const expiresAt = batch ? earliestExpiry(batch.interrupts) : undefined
  // The runtime marks a batch past its deadline (`expired`); the page's own timer says so at the moment it passes.
  const expired = useExpired(expiresAt) || batch?.expired === true
  const inbox = useInbox(active, `${chat.threadId}:${chat.isLoading ? 'busy' : 'idle'}:${batch?.id ?? ''}`)

  useEffect(() => writeThreadToUrl(chat.threadId), [chat.threadId])

  const recover = useCallback(
    (reason: string) => {
      setRecovering(true)
      recorder.addAction('recover', { reason, threadId: runtime.getSnapshot().threadId })
      runtime
        .recover()
        .then((result) => {
          recorder.addAction('recovered', {
            status: result.snapshot.status,
            attached: result.attached,
            interrupts: result.snapshot.interrupts?.length ?? 0,
          })
          setLocalError(undefined)
          addDecisions(result.snapshot.decisions)
          // The versions of its messages (docs/react-runtime.md#branches); a thread without forks shows none.
          runtime.loadBranches().catch(() => undefined)
          const expiring = result.snapshot.status === 'interrupted' && (result.snapshot.interrupts?.length ?? 0) === 0
          setExpiringThread(expiring ? result.snapshot.threadId : undefined)
        })
        .catch((error: unknown) => {
          const recorded = toRecordedError(error)
          recorder.addAction('recover-failed', undefined, recorded)
          // A thread the server has never seen (nothing sent yet) is simply new. A recover that finds a run
          // already followed here (INVALID_STATE) has nothing to restore.
          if (
            recorded.code !== 'THREAD_NOT_FOUND' &&
            recorded.code !== 'NOT_FOUND' &&
            recorded.code !== 'INVALID_STATE'
          )
            setLocalError(`${recorded.code}: ${recorded.message}`)
        })
        .finally(() => setRecovering(false))
    },
    [recorder, runtime, addDecisions],
  )

  // A reload with ?thread=… brings the thread back from the server (a paused batch reappears).
  useEffect(() => {
    if (initialThread === undefined || recoveredFor.current === initialThread) return
    recoveredFor.current = initialThread
    recover('reload')
  }, [initialThread, recover])

  /** Runs a command, recording it; a synchronous refusal is recorded and shown as text. */
  const act = (name: string, detail: Json | undefined, fn: () => unknown): boolean => {
    try {
      recorder.addAction(name, detail)
      const result = fn()
      if (result instanceof Promise) result.catch(() => undefined)
      setLocalError(undefined)
      return true
    } catch (error) {
      const recorded = toRecordedError(error)
      recorder.addAction(`${name}-refused`, detail, recorded)
      // A second click on a batch that is already claimed is expected; it is refused quietly.
      if (recorded.code !== 'BATCH_CLAIMED') setLocalError(`${recorded.code}: ${recorded.message}`)
      return false
    }
  }

  /** A refusal of a message sent while busy (or of a cancel) arrives later: shown like a synchronous one. */
  const refused = (error: unknown) => {
    const { code, message } = toRecordedError(error)
    setLocalError(`${code}: ${message}`)
  }

  // While a run is in progress the message is queued (`whileBusy: 'enqueue'`), or steered into the running turn.
  const send = (whileBusy?: 'steer') => {
    const text = draft.trim()
    if (text === '') return
    if (act(whileBusy ?? 'send', { text }, () => runtime.sendMessage(text, { whileBusy }).catch(refused))) {
      setDraft('')
      setTaken(undefined)
    }
  }

  /** Edit, regenerate and switch versions: a fork (or another thread of the tree) becomes the live thread. */
  const branch = (name: string, detail: Json, fn: () => Promise<void>) => act(name, detail, () => fn().catch(refused))

  const cancelQueued = (runId: string) =>
    act('cancel-queued', { runId }, () => runtime.cancelQueued(runId).catch(refused))

  const newConversation = () => {
    act('new-conversation', { from: chat.threadId }, () => {
      recoveredFor.current = runtime.newThread()
    })
  }

  const selectThread = (threadId: string) => {
    if (threadId === chat.threadId) return
    if (!act('select-thread', { threadId }, () => runtime.setThreadId(threadId))) return
    recoveredFor.current = threadId
    recover('select-thread')
  }

  /** Records the form choices after each draft change the form reports (after commit). */
  const recordDrafts = (drafts: InterruptDrafts, changed: UseInterruptFormResult) => {
    const batchId = changed.batchId
    if (batchId === undefined || runtime.getSnapshot().pendingInterrupts?.id !== batchId) return
    const choices = draftChoices(changed.interrupts, drafts)
    const json = JSON.stringify([batchId, choices])
    if (json === lastChoices.current) return
    lastChoices.current = json
    recorder.add({ kind: 'form', batchId, phase: 'draft', choices })
  }

  const submit = (resume: ResumeOptions) => {
    // The intent is recorded before the SDK is called, so an immediate request stays in order.
    recorder.add({
      kind: 'form',
      batchId: resume.batchId,
      phase: 'submit',
      choices: draftChoices(form.interrupts, form.drafts),
      entries: resume.entries.map((entry) => toJson(entry)),
    })
    act('resume', { batchId: resume.batchId, entries: toJson(resume.entries) }, () => chat.resume(resume))
  }

  const policy = batch ? batchPolicy(batch.interrupts) : undefined
  const expiring = expiringThread !== undefined && expiringThread === chat.threadId && batch === undefined

  // Past the deadline the server decides a deny / cancel batch within about a second, and the runtime, which follows
  // the thread while a batch is pending, shows that decision live. A reload in that second finds the thread paused
  // without a batch: read it again shortly.
  useEffect(() => {
    if (!expiring || !active) return
    const timer = setTimeout(() => recover('deadline'), 1500)
    return () => clearTimeout(timer)
  }, [expiring, active, recover])

  /** Closes an expired `keep` batch: every answer cancelled (the one answer it still admits); the same thread goes on. */
  const closeExpired = () => {
    if (batch === undefined) return
    const entries = batch.interrupts.map((interrupt) => ({ interruptId: interrupt.id, status: 'cancelled' as const }))
    recorder.add({
      kind: 'form',
      batchId: batch.id,
      phase: 'submit',
      choices: {},
      entries: entries.map((e) => toJson(e)),
    })
    act('close-expired', { batchId: batch.id, entries: toJson(entries) }, () =>
      chat.resume({ batchId: batch.id, entries }),
    )
  }

  /** Browser calls waiting on the server after a reload: run them here once, or report them unavailable. */
  const settle = (run: boolean) => {
    act('settle-tool-calls', { run, toolCallIds: chat.pendingToolCalls.map((c) => c.toolCallId) }, () =>
      chat.settleToolCalls({ run }).then(() => {
        const code = runtime.getSnapshot().error?.code
        // Another tab claimed them first (TOOL_CALL_CLAIMED) or already answered them (409
        // TOOL_RESULTS_ALREADY_SUBMITTED): nothing ran here; show them taken and follow until the winner's results are in.
        if (code === 'TOOL_CALL_CLAIMED' || code === 'TOOL_RESULTS_ALREADY_SUBMITTED') {
          setTaken(chat.pendingToolCalls.map((c) => c.toolName).join(', '))
          recover('settled-elsewhere')
        }
      }),
    )
  }

  // The winner may still be running the handler: look again until the offer is gone.
  const stillOffered = taken !== undefined && chat.pendingToolCalls.length > 0 && !chat.isLoading && !recovering
  useEffect(() => {
    if (!stillOffered) return
    const timer = setTimeout(() => recover('claimed-elsewhere'), 300)
    return () => clearTimeout(timer)
  }, [stillOffered, recover])

  const busy = chat.isLoading || recovering
  const blocked = chat.recovery.required
  const formDisabled = chat.isResuming || blocked || expired || !active
  const awaiting = new Set<string>()
  for (const interrupt of batch?.interrupts ?? [])
    if (typeof interrupt.toolCallId === 'string') awaiting.add(interrupt.toolCallId)
  // A subagent waiting for an answer holds the parent's call that runs it.
  for (const group of groupInterruptsBySubagent(batch?.interrupts))
    if (group.parentToolCallId !== undefined) awaiting.add(group.parentToolCallId)

  return (
    <div className="live">
      <ThreadSidebar
        threadId={chat.threadId}
        state={chat.state}
        inbox={inbox}
        busy={busy}
        loading={chat.isLoading}
        active={active}
        onNewConversation={newConversation}
        onSelectThread={selectThread}
      />

      <main className="chat" aria-label="Live chat">
        <InterruptFormProvider
          form={form}
          onSubmit={submit}
          disabled={formDisabled}
          renderers={cards ? CARDS : NO_CARDS}
        >
          <label className="card-toggle">
            <input type="checkbox" checked={cards} onChange={(e) => setCards(e.target.checked)} /> Answer deploys with a
            card at the tool call
          </label>
          {expiring && !chat.recovery.required && (
            <p className="muted" role="status" data-testid="thread-expiring">
              The questions of this conversation passed their deadline; the server is applying their expiry policy and
              the conversation continues on its own.
            </p>
          )}
          {chat.recovery.required && (
            <div className="banner recovery" role="alert">
              <p>
                The continuation failed after the server acknowledged it. This conversation cannot continue safely;
                start a new one (the server keeps what already happened).
              </p>
              <button type="button" className="primary" onClick={newConversation}>
                New conversation
              </button>
            </div>
          )}
          <MessageList
            messages={chat.messages}
            awaitingToolCallIds={awaiting}
            inlineTools={cards ? CARD_TOOLS : undefined}
            busy={chat.isLoading}
            subagents={chat.subagents}
            withheld={chat.withheld}
            actions={(message) => (
              <BranchActions
                message={message}
                branches={chat.branches}
                disabled={busy || batch !== undefined || blocked || !active}
                switchDisabled={busy || !active}
                onEdit={(id, text) => branch('edit-message', { id, text }, () => runtime.editMessage(id, text))}
                onRegenerate={(id) => branch('regenerate', { id }, () => runtime.regenerate(id))}
                onSwitch={(threadId) => branch('switch-branch', { threadId }, () => runtime.switchBranch(threadId))}
              />
            )}
          />
          <DecisionTrail decisions={decisions} label="Decisions on this conversation" />
          <UnknownEffects
            effects={chat.unsettledEffects ?? []}
            disabled={busy || !active}
            onReconcile={(toolCallId, outcome) => {
              recorder.addAction('reconcile', { threadId: chat.threadId, toolCallId, outcome })
              return chat.reconcileEffect({ toolCallId, outcome })
            }}
          />
          {!chat.isLoading && <AwaitingExternal calls={chat.awaitingExternal} />}
          {taken !== undefined && (
            <p className="banner" data-testid="tool-call-taken">
              Another open tab took {taken}: it runs there, once.
            </p>
          )}
          {chat.pendingToolCalls.length > 0 && !chat.isLoading && taken === undefined && (
            <BrowserWorkOffer calls={chat.pendingToolCalls} disabled={busy || !active} onSettle={settle} />
          )}
          {batch !== undefined && (
            <section
              className="batch"
              aria-label="Pending approvals"
              data-batch-id={batch.id}
              data-expired={expired ? 'true' : 'false'}
              data-policy={policy}
            >
              <BatchDeadline
                expired={expired}
                expiresAt={expiresAt}
                policy={policy}
                disabled={busy || !active}
                onClose={closeExpired}
              />
              <InterruptForm
                key={batch.id}
                batch={batch}
                form={form}
                onDraftsChange={recordDrafts}
                disabled={formDisabled}
                onSubmit={submit}
                title={
                  batch.interrupts.length === 1
                    ? 'The assistant is waiting for your answer'
                    : `The assistant is waiting for ${batch.interrupts.length} answers`
                }
              />
            </section>
          )}
          <div className="chat-status" role="status" aria-live="polite">
            {recovering
              ? 'Restoring the conversation from the server…'
              : chat.isResuming
                ? 'Continuing the same turn…'
                : chat.isLoading
                  ? 'The assistant is working…'
                  : ''}
          </div>
          {chat.error !== undefined && <ErrorText error={chat.error} />}
          {localError !== undefined && (
            <p className="error" role="alert" data-testid="local-error">
              {localError}
            </p>
          )}
          <QueuePanel queued={chat.queued} onCancel={cancelQueued} />
          <Composer
            draft={draft}
            onDraft={setDraft}
            onSend={send}
            onStop={() => act('stop', undefined, () => runtime.stop())}
            waitingForBatch={batch !== undefined}
            blocked={blocked || recovering}
            running={chat.isLoading}
            streaming={chat.status === 'streaming'}
          />
        </InterruptFormProvider>
      </main>
    </div>
  )
}

function ErrorText({ error }: { readonly error: InterludeError }) {
  return (
    <p className="error" role="alert" data-testid="chat-error">
      {error.code}: {error.message}
    </p>
  )
}
