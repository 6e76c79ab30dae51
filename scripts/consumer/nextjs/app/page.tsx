import { Chat } from './chat'

// A server component: the chat is a client component, prerendered without touching sessionStorage.
export default function Page() {
  return (
    <main>
      <h1>Release assistant</h1>
      <Chat />
    </main>
  )
}
