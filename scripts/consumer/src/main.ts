// A tiny page on useChat, as an app would write it (no JSX, so no React plugin is needed).
import { createElement as h } from 'react'
import { createRoot } from 'react-dom/client'
import { InterruptForm, messageText, useChat } from '@interlude/react'

function Chat() {
  const chat = useChat({ api: '/api/agent' })
  return h(
    'main',
    null,
    chat.messages.map((m) => h('p', { key: m.id }, messageText(m))),
    h(InterruptForm, { batch: chat.pendingInterrupts, messages: chat.messages, onSubmit: chat.resume }),
    h('button', { disabled: chat.isLoading, onClick: () => void chat.sendMessage('hello') }, 'Send'),
  )
}

createRoot(document.getElementById('root')!).render(h(Chat))
