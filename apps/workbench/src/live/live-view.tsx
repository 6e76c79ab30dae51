import type { InterludeError } from '@interlude/protocol'
import { useCallback, useEffect, useRef, useState } from 'react'
import type { Recorder } from '../recording/recorder.ts'
import { toJson, toRecordedError } from '../recording/to-json.ts'
import { MessageList } from '../ui/message-list.tsx'
import type { Choices, InterruptLike } from './answers.ts'
import { BatchForm } from './batch-form.tsx'
import { threadFromUrl, writeThreadToUrl } from './thread-url.ts'
import { useInbox } from './use-inbox.ts'
import { useLiveChat } from './use-live-chat.ts'

export interface LiveViewProps {
  readonly recorder: Recorder
  /** False while the replay is shown: nothing in the live view fetches then. */
  readonly active: boolean
}

export function LiveView({ recorder, active }: LiveViewProps) {
  const [initialThread] = useState(threadFromUrl)
  const { runtime, chat } = useLiveChat(recorder, initialThread)
  const [draft, setDraft] = useState('')
  const [localError, setLocalError] = useState<string | undefined>()
  const [recovering, setRecovering] = useState(false)
  // Form choices belong to the batch they were made for (keyed by its local id).
  const [form, setForm] = useState<{ readonly batchId: string; readonly choices: Choices } | undefined>()
  const recoveredFor = useRef<string | undefined>(undefined)

  const batch = chat.pendingInterrupts
  const choices = form !== undefined && batch !== undefined && form.batchId === batch.id ? form.choices : {}
  const inbox = useInbox(active, `${chat.threadId}:${chat.isLoading ? 'busy' : 'idle'}:${batch?.id ?? ''}`)

  useEffect(() => writeThreadToUrl(chat.threadId), [chat.threadId])

  const recover = useCallback(
    (reason: string) => {
      setRecovering(true)
      recorder.addAction('recover', { reason, threadId: runtime.getSnapshot().threadId })
      runtime
        .recover()
        .then((result) => {
          recorder.addAction('recovered', { status: result.snapshot.status, attached: result.attached, interrupts: result.snapshot.interrupts?.length ?? 0 })
          setLocalError(undefined)
        })
        .catch((error: unknown) => {
          const recorded = toRecordedError(error)
          recorder.addAction('recover-failed', undefined, recorded)
          // A thread the server has never seen (nothing sent yet) is simply new.
          if (recorded.code !== 'THREAD_NOT_FOUND' && recorded.code !== 'NOT_FOUND') setLocalError(`${recorded.code}: ${recorded.message}`)
        })
        .finally(() => setRecovering(false))
    },
    [recorder, runtime],
  )

  // A reload with ?thread=… brings the thread back from the server (a paused batch reappears).
  useEffect(() => {
    if (initialThread === undefined || recoveredFor.current === initialThread) return
    recoveredFor.current = initialThread
    recover('reload')
  }, [initialThread, recover])

  const act = (name: string, detail: unknown, fn: () => unknown): boolean => {
    try {
      recorder.addAction(name, toJson(detail))
      const result = fn()
      if (result instanceof Promise) result.catch(() => undefined)
      setLocalError(undefined)
      return true
    } catch (error) {
      const recorded = toRecordedError(error)
      recorder.addAction(`${name}-refused`, toJson(detail), recorded)
      // A second click on a batch that is already claimed is expected; it is refused quietly.
      if (recorded.code !== 'BATCH_CLAIMED') setLocalError(`${recorded.code}: ${recorded.message}`)
      return false
    }
  }

  const send = () => {
    const text = draft.trim()
    if (text === '') return
    if (act('send', { text }, () => runtime.sendMessage(text))) setDraft('')
  }

  const newConversation = () => {
    act('new-conversation', { from: chat.threadId }, () => {
      const id = runtime.newThread()
      recoveredFor.current = id
    })
    setForm(undefined)
  }

  const selectThread = (threadId: string) => {
    if (threadId === chat.threadId) return
    act('select-thread', { threadId }, () => runtime.setThreadId(threadId))
    recoveredFor.current = threadId
    setForm(undefined)
    recover('select-thread')
  }

  const onChoicesChange = (next: Choices) => {
    if (batch === undefined) return
    setForm({ batchId: batch.id, choices: next })
    recorder.add({ kind: 'form', batchId: batch.id, phase: 'draft', choices: toJson(next) as Record<string, never> })
  }

  const busy = chat.isLoading || recovering
  const blocked = chat.recovery.required
  const awaiting = new Set<string>()
  for (const interrupt of batch?.interrupts ?? []) if (typeof interrupt.toolCallId === 'string') awaiting.add(interrupt.toolCallId)

  return (
    <div className="live">
      <aside className="threads" aria-label="Threads">
        <div className="threads-head">
          <h2>Threads</h2>
          <button type="button" onClick={newConversation} disabled={chat.isLoading}>
            New conversation
          </button>
        </div>
        <p className="current-thread">
          Current: <code data-testid="thread-id">{chat.threadId}</code>
        </p>
        <h3>
          Approval inbox{' '}
          <button type="button" className="link" onClick={inbox.refresh} disabled={!active}>
            refresh
          </button>
        </h3>
        {inbox.error !== undefined && <p className="error">{inbox.error}</p>}
        {inbox.threads.length === 0 ? (
          <p className="muted">{inbox.loading ? 'Loading…' : 'No thread is waiting for answers.'}</p>
        ) : (
          <ul className="inbox" aria-label="Threads waiting for answers">
            {inbox.threads.map((thread) => (
              <li key={thread.threadId}>
                <button type="button" className="inbox-item" aria-current={thread.threadId === chat.threadId ? 'true' : undefined} disabled={busy} onClick={() => selectThread(thread.threadId)}>
                  <span className="inbox-title">{thread.title ?? thread.threadId.slice(0, 8)}</span>
                  <span className="muted">
                    {thread.interrupts?.length ?? 0} waiting · {new Date(thread.updatedAt).toLocaleTimeString()}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </aside>

      <main className="chat" aria-label="Live chat">
        {blocked && (
          <div className="banner recovery" role="alert">
            <p>
              The continuation failed after the server acknowledged it. This conversation cannot continue safely; start a new one (the server keeps what already happened).
            </p>
            <button type="button" className="primary" onClick={newConversation}>
              New conversation
            </button>
          </div>
        )}
        <MessageList messages={chat.messages} awaitingToolCallIds={awaiting} busy={chat.isLoading} />
        {batch !== undefined && (
          <BatchForm
            key={batch.id}
            batchId={batch.id}
            interrupts={batch.interrupts as readonly InterruptLike[]}
            choices={choices}
            onChoicesChange={onChoicesChange}
            disabled={chat.isResuming || blocked || !active}
            onSubmit={(answer) => {
              // The intent is recorded before the SDK is called, so an immediate request stays in order.
              recorder.add({ kind: 'form', batchId: batch.id, phase: 'submit', choices: toJson(choices) as Record<string, never>, entries: answer.entries.map((e) => toJson(e)) })
              act('resume', { batchId: batch.id, entries: answer.entries }, () => runtime.resume({ batchId: batch.id, entries: answer.entries }))
            }}
          />
        )}
        <div className="chat-status" role="status" aria-live="polite">
          {recovering ? 'Restoring the conversation from the server…' : chat.isResuming ? 'Continuing the same turn…' : chat.isLoading ? 'The assistant is working…' : ''}
        </div>
        {chat.error !== undefined && <ErrorText error={chat.error} />}
        {localError !== undefined && (
          <p className="error" role="alert" data-testid="local-error">
            {localError}
          </p>
        )}
        <form
          className="composer"
          onSubmit={(e) => {
            e.preventDefault()
            send()
          }}
        >
          <label className="visually-hidden" htmlFor="composer">
            Message
          </label>
          <textarea
            id="composer"
            rows={2}
            value={draft}
            placeholder={batch ? 'Answer the pending batch first' : 'Message the release assistant, e.g. “deploy v2.1 to production”'}
            disabled={blocked || batch !== undefined}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault()
                send()
              }
            }}
          />
          <button type="submit" className="primary" disabled={busy || blocked || batch !== undefined || draft.trim() === ''}>
            Send
          </button>
          <button type="button" disabled={!chat.isLoading} onClick={() => act('stop', undefined, () => runtime.stop())}>
            Stop
          </button>
        </form>
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
