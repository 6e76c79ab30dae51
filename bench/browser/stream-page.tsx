/**
 * The page of the browser benchmark (`browser-stream.ts`), bundled with esbuild and run in real Chromium. Two
 * components render the same 2,000-message thread with the same row component while one more assistant message
 * streams in at about 100 deltas/s:
 *
 * - `chat`: `useChat` (ChatRuntime, its SSE decoder and its 16 ms delta coalescing) over an in-page `fetch` that
 *   serves the run as SSE;
 * - `bare`: a plain React component that reads the same SSE bytes with a minimal loop (TextDecoder, split on blank
 *   lines, JSON.parse) and appends the deltas with the same coalescing (the first delta of a burst arms a 16 ms timer,
 *   the timer commits the burst as one state update).
 *
 * Node drives it through `window.__bench` (start, mark, collect, stop).
 */
import { useChat } from '@interlude/react'
import type { Message } from '@interlude/protocol'
import { memo, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { createRoot } from 'react-dom/client'

const THREAD_SIZE = 2000
const DELTA_INTERVAL_MS = 10 // ~100 deltas/s
const THROTTLE_MS = 16 // the runtime's default coalescing window (`throttleMs`)

interface Row {
  readonly id: string
  readonly role: string
  readonly content: string
}

function history(): Message[] {
  const words = 'release deploy staging production approve version rollback canary metrics latency budget'.split(' ')
  const out: Message[] = []
  for (let i = 0; i < THREAD_SIZE; i++) {
    let text = ''
    for (let w = 0; w < 20 + (i % 30); w++) text += words[(i * 7 + w) % words.length] + ' '
    out.push(
      i % 2 === 0 ? { id: `m${i}`, role: 'user', content: text } : { id: `m${i}`, role: 'assistant', content: text },
    )
  }
  return out
}

const RowView = memo(function RowView({ row }: { row: Row }) {
  return (
    <li className={`row row-${row.role}`}>
      <b>{row.role}</b> <span>{row.content}</span>
    </li>
  )
})

/** The list both components render; rows are memoised, so only a changed message re-renders. */
function Thread({ rows }: { rows: readonly Row[] }) {
  return (
    <ol>
      {rows.map((row) => (
        <RowView key={row.id} row={row} />
      ))}
    </ol>
  )
}

// ---- the stream: the same SSE bytes for both components --------------------------------------------------------

const encoder = new TextEncoder()
let streaming = false
let deltasSent = 0

function sse(id: number, event: object): Uint8Array {
  return encoder.encode(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`)
}

/** A run that streams one assistant message until `stop()`: RUN_STARTED, TEXT_MESSAGE_START, deltas every 10 ms. */
function runStream(threadId: string, runId: string): ReadableStream<Uint8Array> {
  let seq = 0
  let timer: ReturnType<typeof setInterval> | undefined
  return new ReadableStream<Uint8Array>({
    start(controller) {
      streaming = true
      controller.enqueue(sse(++seq, { type: 'RUN_STARTED', threadId, runId }))
      controller.enqueue(sse(++seq, { type: 'TEXT_MESSAGE_START', messageId: 'streamed', role: 'assistant' }))
      timer = setInterval(() => {
        if (!streaming) {
          clearInterval(timer)
          controller.enqueue(sse(++seq, { type: 'TEXT_MESSAGE_END', messageId: 'streamed' }))
          controller.enqueue(sse(++seq, { type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'success' } }))
          controller.close()
          return
        }
        deltasSent++
        controller.enqueue(
          sse(++seq, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'streamed', delta: `tok${deltasSent % 10} ` }),
        )
      }, DELTA_INTERVAL_MS)
    },
    cancel() {
      clearInterval(timer)
    },
  })
}

const fakeFetch: typeof fetch = async (_input, init) => {
  const body = JSON.parse(String(init?.body ?? '{}')) as { threadId: string; runId: string }
  return new Response(runStream(body.threadId, body.runId), {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' },
  })
}

// ---- counters -----------------------------------------------------------------------------------------------------

let renders = 0
let longTasks: number[] = []
/** The rows of the latest render (either component): the deltas shown so far are counted from them. */
let currentRows: readonly Row[] = []
function deltasApplied(): number {
  const last = currentRows[currentRows.length - 1]
  return last?.id === 'streamed' ? last.content.split(' ').length - 1 : 0
}
/**
 * Counts commits of the component it is rendered in (a child that is not memoised re-renders, and its layout effect
 * runs, once per commit of its parent). React's <Profiler> is compiled out of production builds.
 */
function CommitCounter() {
  useLayoutEffect(() => {
    renders++
  })
  return null
}
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) longTasks.push(entry.duration)
}).observe({ type: 'longtask', buffered: false })

let startRun: () => void = () => undefined

// ---- the two components -------------------------------------------------------------------------------------------

const HISTORY = history()

function ChatComponent() {
  const chat = useChat({ threadId: 'bench', api: '/bench', mode: 'plain', fetch: fakeFetch, throttleMs: THROTTLE_MS })
  const { setMessages, sendMessage } = chat
  useEffect(() => {
    setMessages(HISTORY)
    startRun = () => void sendMessage('go')
  }, [setMessages, sendMessage])
  currentRows = chat.messages as readonly Row[]
  return (
    <>
      <CommitCounter />
      <Thread rows={chat.messages as readonly Row[]} />
    </>
  )
}

function BareComponent() {
  const [rows, setRows] = useState<readonly Row[]>(() => HISTORY as readonly Row[])
  const buffer = useRef<string[]>([])
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => {
    startRun = () => {
      setRows((current) => [...current, { id: 'go', role: 'user', content: 'go' }])
      void read()
    }
    const flush = () => {
      timer.current = undefined
      const text = buffer.current.join('')
      buffer.current = []
      setRows((current) => {
        const last = current[current.length - 1]
        const next = current.slice(0, -1)
        return last?.id === 'streamed'
          ? [...next, { ...last, content: last.content + text }]
          : [...current, { id: 'streamed', role: 'assistant', content: text }]
      })
    }
    async function read() {
      const response = await fakeFetch('/bench/runs', { body: JSON.stringify({ threadId: 'bench', runId: 'r1' }) })
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
      let pending = ''
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        pending += value
        let cut: number
        while ((cut = pending.indexOf('\n\n')) >= 0) {
          const frame = pending.slice(0, cut)
          pending = pending.slice(cut + 2)
          const data = frame.split('\n').find((line) => line.startsWith('data: '))
          if (data === undefined) continue
          const event = JSON.parse(data.slice(6)) as { type: string; delta?: string }
          if (event.type === 'TEXT_MESSAGE_CONTENT' && event.delta !== undefined) {
            buffer.current.push(event.delta)
            timer.current ??= setTimeout(flush, THROTTLE_MS)
          }
        }
      }
    }
  }, [])
  currentRows = rows
  return (
    <>
      <CommitCounter />
      <Thread rows={rows} />
    </>
  )
}

const mode = (window as unknown as { __BENCH_MODE: 'chat' | 'bare' }).__BENCH_MODE
createRoot(document.getElementById('root')!).render(mode === 'chat' ? <ChatComponent /> : <BareComponent />)

;(window as unknown as { __bench: unknown }).__bench = {
  ready: () => document.querySelectorAll('li.row').length >= THREAD_SIZE,
  start: () => startRun(),
  /** Starts the measured window: counters from zero. */
  mark: () => {
    renders = 0
    longTasks = []
    return { deltasApplied: deltasApplied(), at: performance.now() }
  },
  collect: () => ({ renders, longTasks, deltasApplied: deltasApplied(), deltasSent, at: performance.now() }),
  stop: () => {
    streaming = false
  },
}
