/**
 * SSE decoder benchmark: @interlude/protocol's decodeSse / decodeEvents (eventsource-parser@4
 * underneath) vs a bare hand-written loop (TextDecoder + split on "\n\n" + JSON.parse), on the same
 * 100k-event stream of Chinese/emoji text deltas cut into 16 KiB chunks. Medians of 7 runs.
 *
 *   pnpm --filter @interlude/bench exec node --conditions=@interlude/source --import tsx sse-decoder.ts
 */
import { decodeEventBatches, decodeEvents, decodeSse, encodeEvent } from '@interlude/protocol/sse'

const N = Number(process.env.EVENTS ?? 100_000)
const RUNS = 7
const CHUNK = 16 * 1024
const words = ['部署', '发布', 'v2.1', '🚀', '✅', 'production', 'staging', '环境', '👩‍💻', 'release']

function buildStream(): Uint8Array[] {
  let text = ''
  for (let i = 0; i < N; i++) {
    text += encodeEvent(
      { type: 'TEXT_MESSAGE_CONTENT', messageId: `m${Math.floor(i / 1000)}`, delta: `${words[i % words.length]} ` },
      i + 1,
    )
  }
  const bytes = new TextEncoder().encode(text)
  const chunks: Uint8Array[] = []
  for (let i = 0; i < bytes.length; i += CHUNK) chunks.push(bytes.subarray(i, i + CHUNK))
  return chunks
}

function source(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      for (const c of chunks) yield c
    },
  }
}

async function bareLoop(chunks: Uint8Array[]): Promise<number> {
  const decoder = new TextDecoder()
  let buffer = ''
  let count = 0
  for await (const chunk of source(chunks)) {
    buffer += decoder.decode(chunk, { stream: true })
    let idx: number
    while ((idx = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, idx)
      buffer = buffer.slice(idx + 2)
      const line = frame.split('\n').find((l) => l.startsWith('data:'))
      if (line) {
        JSON.parse(line.slice(5))
        count++
      }
    }
  }
  return count
}

async function sseOnly(chunks: Uint8Array[]): Promise<number> {
  let count = 0
  for await (const frame of decodeSse(source(chunks))) {
    JSON.parse(frame.data)
    count++
  }
  return count
}

async function events(chunks: Uint8Array[]): Promise<number> {
  let count = 0
  for await (const _ of decodeEvents(source(chunks))) count++
  return count
}

async function eventBatches(chunks: Uint8Array[]): Promise<number> {
  let count = 0
  for await (const batch of decodeEventBatches(source(chunks))) count += batch.length
  return count
}

async function measure(name: string, fn: (c: Uint8Array[]) => Promise<number>, chunks: Uint8Array[]) {
  const times: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now()
    const n = await fn(chunks)
    times.push(performance.now() - t0)
    if (n !== N) throw new Error(`${name}: decoded ${n} of ${N}`)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(RUNS / 2)]!
  return { name, median, eventsPerSec: Math.round((N / median) * 1000) }
}

const chunks = buildStream()
const results = []
for (const [name, fn] of [
  ['bare loop (TextDecoder + split + JSON.parse)', bareLoop],
  ['decodeSse + JSON.parse (eventsource-parser)', sseOnly],
  ['decodeEvents (+ shape checks)', events],
  ['decodeEventBatches (+ shape checks)', eventBatches],
] as const) {
  results.push(await measure(name, fn, chunks))
}
const bare = results[0]!.median
console.log(
  `SSE decoder, ${N} events, ${chunks.length} chunks of ${CHUNK} B, median of ${RUNS} (node ${process.version})`,
)
for (const r of results) {
  console.log(
    `${r.name.padEnd(48)} ${r.median.toFixed(1).padStart(8)} ms  ${String(r.eventsPerSec).padStart(9)} ev/s  ${((bare / r.median) * 100).toFixed(0).padStart(4)}% of bare`,
  )
}
