/**
 * Client ingest benchmark (docs/quality.md): events/s from SSE bytes into a fully assembled message
 * list, on the same recorded stream, side by side in one run:
 *   - @interlude/react ChatRuntime (HTTP transport + protocol codec + reducer, real fetch Response)
 *   - @ag-ui/client HttpAgent (same bytes through its injected fetch)
 *   - a bare TextDecoder + JSON.parse loop (no assembly: the floor)
 * at 10k and 100k events of long streamed messages with Chinese and emoji deltas.
 *
 *   node --conditions=@interlude/source --import tsx bench/client-ingest.ts
 */
import { HttpAgent } from '@ag-ui/client'
import { ChatRuntime } from '@interlude/react/core'
import os from 'node:os'

const THREAD = 'bench-thread'
const RUN = 'bench-run'
const DELTAS = ['你好', '世界', '🙂', '👩🏽‍💻', ' streaming ', '数据', '🚀✨', 'text ', '，', '。']
const CHUNK = 16 * 1024 // bytes per network read

/** A recorded stream of `total` events: messages of ~500 deltas each. */
function record(total: number): { bytes: Uint8Array; textLength: number; messages: number } {
  const frames: string[] = []
  let seq = 0
  const push = (event: object) => frames.push(`id: ${++seq}\ndata: ${JSON.stringify(event)}\n\n`)
  push({ type: 'RUN_STARTED', threadId: THREAD, runId: RUN })
  let textLength = 0
  let messages = 0
  while (seq < total - 1) {
    const messageId = `m-${messages++}`
    push({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' })
    for (let i = 0; i < 500 && seq < total - 2; i++) {
      const delta = DELTAS[(i + messages) % DELTAS.length]!
      textLength += delta.length
      push({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta })
    }
    push({ type: 'TEXT_MESSAGE_END', messageId })
  }
  push({ type: 'RUN_FINISHED', threadId: THREAD, runId: RUN, outcome: { type: 'success' } })
  return { bytes: new TextEncoder().encode(frames.join('')), textLength, messages }
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close()
        return
      }
      controller.enqueue(bytes.subarray(offset, offset + CHUNK))
      offset += CHUNK
    },
  })
}

const sseResponse = (bytes: Uint8Array) =>
  new Response(streamOf(bytes), { status: 200, headers: { 'Content-Type': 'text/event-stream' } })

async function bare(bytes: Uint8Array): Promise<number> {
  const decoder = new TextDecoder()
  let buffer = ''
  let events = 0
  const reader = streamOf(bytes).getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let start = 0
    for (let end = buffer.indexOf('\n\n', start); end >= 0; end = buffer.indexOf('\n\n', start)) {
      const data = buffer.indexOf('data: ', start)
      JSON.parse(buffer.slice(data + 6, end))
      events++
      start = end + 2
    }
    buffer = buffer.slice(start)
  }
  return events
}

function textOf(messages: readonly { content?: unknown }[]): number {
  let n = 0
  for (const m of messages) if (typeof m.content === 'string') n += m.content.length
  return n
}

async function runtime(bytes: Uint8Array): Promise<number> {
  const ids = ['bench-user', RUN]
  const rt = new ChatRuntime({
    threadId: THREAD,
    api: 'http://bench.invalid/api/agent',
    generateId: () => ids.shift() ?? 'x',
    fetch: async () => sseResponse(bytes),
  })
  await rt.sendMessage('go')
  const s = rt.getSnapshot()
  if (s.error) throw s.error
  rt.dispose()
  return textOf(s.messages)
}

async function httpAgent(bytes: Uint8Array): Promise<number> {
  const agent = new HttpAgent({
    url: 'http://bench.invalid/api/agent/runs',
    threadId: THREAD,
    fetch: async () => sseResponse(bytes),
  })
  await agent.runAgent({ runId: RUN })
  return textOf(agent.messages as { content?: unknown }[])
}

async function time(fn: () => Promise<unknown>, iterations: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < iterations; i++) {
    const t = performance.now()
    await fn()
    samples.push(performance.now() - t)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

async function main() {
  const sizes = [10_000, 100_000]
  const results: Record<string, Record<number, number>> = { bare: {}, ChatRuntime: {}, HttpAgent: {} }
  const silence = console.warn
  for (const size of sizes) {
    const rec = record(size)
    // Correctness first: every client assembles the same text.
    const assembled = await runtime(rec.bytes)
    if (assembled - 2 !== rec.textLength)
      throw new Error(`ChatRuntime assembled ${assembled - 2} chars, expected ${rec.textLength}`)
    console.warn = () => undefined // HttpAgent warns on unknown fields; keep the output readable
    const agentText = await httpAgent(rec.bytes)
    console.warn = silence
    if (agentText !== rec.textLength)
      throw new Error(`HttpAgent assembled ${agentText} chars, expected ${rec.textLength}`)
    const iterations = size >= 100_000 ? 5 : 15
    for (const [name, fn] of [
      ['bare', () => bare(rec.bytes)],
      ['ChatRuntime', () => runtime(rec.bytes)],
      ['HttpAgent', () => httpAgent(rec.bytes)],
    ] as const) {
      await time(fn, 2) // warm-up
      results[name]![size] = await time(fn, iterations)
    }
    console.log(
      `${size} events: ${(rec.bytes.length / 1024 / 1024).toFixed(1)} MiB, ${rec.messages} messages, ${rec.textLength} chars`,
    )
  }
  const rate = (name: string, size: number) => Math.round(size / (results[name]![size]! / 1000))
  console.log(
    `\nclient ingest (median, ${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version})`,
  )
  console.log('| client | 10k events | 100k events | events/s @100k | % of bare @100k | time(100k)/time(10k) |')
  console.log('|---|---|---|---|---|---|')
  for (const name of ['bare', 'ChatRuntime', 'HttpAgent']) {
    const r = results[name]!
    console.log(
      `| ${name} | ${r[10_000]!.toFixed(1)} ms | ${r[100_000]!.toFixed(1)} ms | ${rate(name, 100_000).toLocaleString('en')} | ${((rate(name, 100_000) / rate('bare', 100_000)) * 100).toFixed(0)}% | ${(r[100_000]! / r[10_000]!).toFixed(1)} |`,
    )
  }
  const share = rate('ChatRuntime', 100_000) / rate('bare', 100_000)
  const linear = results.ChatRuntime![100_000]! / results.ChatRuntime![10_000]!
  console.log(
    `\ntargets: ChatRuntime >= 40% of bare at 100k: ${share >= 0.4 ? 'met' : 'MISSED'} (${(share * 100).toFixed(0)}%); time(100k)/time(10k) <= 12: ${linear <= 12 ? 'met' : 'MISSED'} (${linear.toFixed(1)})`,
  )
}

await main()
