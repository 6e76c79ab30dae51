import { InterruptForm, messageText, useChat } from '@interlude/react'
import { StrictMode, useState } from 'react'
import { createRoot } from 'react-dom/client'

/**
 * The smallest `useChat` app, for the e2e suite: it talks to the foreign AG-UI endpoint that serves it (same origin),
 * at the path of `?run=` (default `/approval/legacy`: LangGraph's `interrupt()` through `@ag-ui/langgraph`).
 */
const runUrl = new URLSearchParams(window.location.search).get('run') ?? '/approval/legacy'
// LangGraph's API server takes only UUID thread ids.
const threadId = crypto.randomUUID()

function Chat() {
  const chat = useChat({ runUrl, mode: 'plain', threadId })
  const [text, setText] = useState('')
  return (
    <>
      <h1>Foreign server</h1>
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
        <button type="submit" disabled={chat.isLoading || !!chat.pendingInterrupts}>
          Send
        </button>
      </form>
      <p data-testid="status">
        {chat.error
          ? `error: ${chat.error.code}`
          : chat.isLoading
            ? 'running'
            : chat.pendingInterrupts
              ? 'paused'
              : 'idle'}
      </p>
    </>
  )
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Chat />
  </StrictMode>,
)
