'use client'
import { useEffect, useState } from 'react'
import { InterludeError, InterruptForm, messageText, useChat } from '@interlude/react'

/**
 * The thread id kept across reloads, read after mount: `sessionStorage` does not exist while Next.js prerenders the
 * page, so the first render (on the server and in the browser alike) has no id yet.
 */
function useStoredThreadId(key = 'thread'): string | undefined {
  const [threadId, setThreadId] = useState<string>()
  useEffect(() => {
    const id = sessionStorage.getItem(key) ?? crypto.randomUUID()
    sessionStorage.setItem(key, id)
    setThreadId(id)
  }, [key])
  return threadId
}

export function Chat() {
  const threadId = useStoredThreadId()
  return threadId === undefined ? <p>Loading…</p> : <Conversation threadId={threadId} />
}

function Conversation({ threadId }: { threadId: string }) {
  const chat = useChat({ api: '/api/agent', threadId })
  const [text, setText] = useState('')
  const { recover } = chat
  useEffect(() => {
    // A reload brings back the messages, a pending batch or a live run.
    recover().catch((error: unknown) => {
      if (!(InterludeError.isInstance(error) && error.code === 'THREAD_NOT_FOUND')) console.error(error)
    })
  }, [recover])
  return (
    <>
      <ul aria-label="Messages">
        {chat.messages.map((m) => (
          <li key={m.id} data-role={m.role}>
            {messageText(m)}
          </li>
        ))}
      </ul>
      <InterruptForm
        batch={chat.pendingInterrupts}
        messages={chat.messages}
        onSubmit={chat.resume}
        disabled={chat.isResuming}
      />
      <form
        onSubmit={(e) => {
          e.preventDefault()
          if (text.trim() === '') return
          chat.sendMessage(text).catch((error: unknown) => console.error(error))
          setText('')
        }}
      >
        <label>
          Message <input value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <button type="submit" disabled={chat.isLoading || !!chat.pendingInterrupts || chat.recovery.required}>
          Send
        </button>
      </form>
      <p data-testid="status">{chat.isLoading ? 'running' : chat.pendingInterrupts ? 'paused' : 'idle'}</p>
    </>
  )
}
