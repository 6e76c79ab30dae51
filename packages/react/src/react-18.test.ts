// @vitest-environment jsdom
/**
 * useChat on React 18.3 (the peer range is ^18.2 || ^19). `react` is swapped for the `react-18`
 * alias in this file's module graph, and react-dom 18 is loaded so that its own `require('react')`
 * gets the same React 18 copy (pnpm links it against the workspace's React 19 otherwise).
 */
import Module, { createRequire } from 'node:module'
import type * as ReactTypes from 'react'
import type * as ReactDOMClientTypes from 'react-dom/client'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { approvalInterrupt, ControllableTransport, ev, step } from './test-utils/controllable-transport.ts'

vi.mock('react', async () => {
  const { createRequire: make } = await import('node:module')
  const react18 = make(import.meta.url)('react-18') as Record<string, unknown>
  return { ...react18, default: react18 }
})

type Resolve = (request: string, parent: { filename?: string } | undefined, ...rest: unknown[]) => string
const M = Module as unknown as { _resolveFilename: Resolve }
const require = createRequire(import.meta.url)
const react18Path = require.resolve('react-18')
const original = M._resolveFilename
M._resolveFilename = function (this: unknown, request, parent, ...rest) {
  if (request === 'react' && parent?.filename?.includes('react-dom@18.')) return react18Path
  return original.call(this, request, parent, ...rest)
}
afterAll(() => {
  M._resolveFilename = original
})

const React = require('react-18') as typeof ReactTypes & { act: (fn: () => unknown) => Promise<void> }
const ReactDOMClient = require('react-dom-18/client') as typeof ReactDOMClientTypes
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true

describe('useChat on React 18', () => {
  it('runs the interrupt/resume cycle in <StrictMode> with React 18.3', async () => {
    expect(React.version).toMatch(/^18\./)
    const { useChat } = await import('./use-chat.ts')
    const transport = new ControllableTransport()
    let chat: ReturnType<typeof useChat> | undefined
    let renders = 0
    function App() {
      renders++
      chat = useChat({ transport, threadId: 't18', throttleMs: 0 })
      return React.createElement('p', null, chat.messages.map((m) => String(m.content)).join('|'))
    }
    const container = document.createElement('div')
    const root = ReactDOMClient.createRoot(container)
    await React.act(async () => root.render(React.createElement(React.StrictMode, null, React.createElement(App))))
    expect(renders).toBeGreaterThan(0)
    await React.act(async () => void chat!.sendMessage('deploy'))
    const run = await transport.waitForRun(1)
    await React.act(async () => {
      run.channel.pushAll([
        ev.runStarted('t18', run.input.runId),
        ev.textStart('a'),
        ev.text('a', 'plan'),
        ev.interrupted('t18', run.input.runId, [approvalInterrupt('i', 'c')]),
      ])
      await step(run.channel)
    })
    expect(container.textContent).toBe('deploy|plan')
    const batch = chat!.pendingInterrupts!
    await React.act(
      async () =>
        void chat!.resume({
          batchId: batch.id,
          entries: [{ interruptId: 'i', status: 'resolved', payload: { approved: true } }],
        }),
    )
    expect(() => chat!.resume({ batchId: batch.id, entries: [] })).toThrow(
      expect.objectContaining({ code: 'BATCH_CLAIMED' }),
    )
    const resumed = await transport.waitForRun(2)
    await React.act(async () => {
      resumed.channel.pushAll([ev.runStarted('t18', resumed.input.runId), ev.finished('t18', resumed.input.runId)])
      await step(resumed.channel)
    })
    expect(transport.runs).toHaveLength(2)
    expect(chat).toMatchObject({ isResuming: false, pendingInterrupts: undefined, error: undefined })
    await React.act(async () => root.unmount())
  })
})
