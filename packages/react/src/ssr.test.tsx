// @vitest-environment node
import { renderToString } from 'react-dom/server'
import { describe, expect, it } from 'vitest'

describe('server-side rendering', () => {
  it('imports without window and renders the server snapshot (no network)', async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined')
    const requests: unknown[] = []
    const { useChat, InterruptForm } = await import('./index.ts')
    function App() {
      const chat = useChat({
        threadId: 'ssr-thread',
        initialMessages: [{ id: 'm1', role: 'user', content: 'hello from the server' }],
        fetch: async (...args: unknown[]) => {
          requests.push(args)
          throw new Error('no network during SSR')
        },
      })
      return (
        <main data-thread={chat.threadId} data-loading={String(chat.isLoading)}>
          {chat.messages.map((m) => (
            <p key={m.id}>{String(m.content)}</p>
          ))}
          <InterruptForm batch={chat.pendingInterrupts} onSubmit={chat.resume} />
        </main>
      )
    }
    const html = renderToString(<App />)
    expect(html).toContain('data-thread="ssr-thread"')
    expect(html).toContain('data-loading="false"')
    expect(html).toContain('hello from the server')
    expect(requests).toEqual([])
  })
})
