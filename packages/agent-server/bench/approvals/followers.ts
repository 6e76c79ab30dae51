/** Part 2 of the approvals bench: 1,000 followers of one thread beside a bare Hono broadcast. */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import path from 'node:path'
import { decodeEventBatches } from '@interlude/protocol/sse'
import { launched } from '../cli-process.ts'
import { ROOT, ENG, tmp, sleep, poster } from './setup.ts'

export const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 1000)
export const FOLLOW_ROUNDS = Number(process.env.BENCH_FOLLOW_ROUNDS ?? 20)
/** BENCH_FOLLOW_DECODE=1: followers decode with the protocol's SSE decoder instead of only splitting frames. */
export const DECODE = process.env.BENCH_FOLLOW_DECODE === '1'

// ---- 2. followers ----------------------------------------------------------------------------------

const epochNow = () => performance.timeOrigin + performance.now()

/** `fixture`: `follow-server.ts` (the real server) or `broadcast-server.ts` (the bare broadcast it is compared with). */
export async function followers(fixture: string) {
  const child = spawn(
    process.execPath,
    [
      // BENCH_PROFILE_DIR: a CPU profile of the server process, for finding where the fan-out spends its time.
      ...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []),
      ...['--import', 'tsx', '--conditions', '@interlude/source', fixture, path.join(tmp, `follow-${randomUUID()}.db`)],
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  // When each event was committed, by seq (from the server's `appended <first> <last> <epoch ms>` lines).
  const appendedAt = new Map<number, number>()
  let pending = ''
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      const m = /^appended (\d+) (\d+) ([\d.]+)$/.exec(line)
      if (m) for (let seq = Number(m[1]); seq <= Number(m[2]); seq++) appendedAt.set(seq, Number(m[3]))
    }
  })
  const server = await launched(child, () => child.kill('SIGTERM'))
  const threadId = `follow-${randomUUID()}`
  const post = poster(server.baseUrl, ENG)
  const turn = async () => {
    const response = await post({
      threadId,
      runId: randomUUID(),
      messages: [{ id: randomUUID(), role: 'user', content: 'hi' }],
    })
    const text = await response.text()
    return Number(/id: (\d+)\n[^\n]*\n\n$/.exec(text)![1]) // the run's last seq
  }
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const requests: http.ClientRequest[] = []
  // receipts[f] = (seq, epoch ms) of every event follower f received.
  const receipts: [number, number][][] = Array.from({ length: FOLLOWERS }, () => [])
  const lastSeen = new Int32Array(FOLLOWERS)
  const runStarts = new Set<number>()
  try {
    const start = await turn()
    const url = new URL(server.baseUrl)
    await new Promise<void>((resolve, reject) => {
      let connected = 0
      for (let f = 0; f < FOLLOWERS; f++) {
        const req = http.get(
          {
            host: url.hostname,
            port: url.port,
            path: `${url.pathname}/threads/${threadId}/events?follow=1&after=${start}`,
            headers: { ...ENG, Accept: 'text/event-stream' },
            agent,
          },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`follow answered ${res.statusCode}`))
            connected += 1
            if (connected === FOLLOWERS) resolve()
            const receive = (id: number, type: string | undefined, at: number) => {
              if (type === 'RUN_STARTED') runStarts.add(id)
              receipts[f]!.push([id, at])
              lastSeen[f] = id
            }
            if (DECODE) {
              void (async () => {
                try {
                  for await (const batch of decodeEventBatches(res)) {
                    const at = epochNow()
                    for (const e of batch) receive(Number(e.id), e.event.type, at)
                  }
                } catch {
                  // destroyed at the end
                }
              })()
            } else {
              // Receipt = the frame's bytes arrived: split frames and read `id:` and the type, nothing more, so one
              // process can stand in for 1,000 followers without its parsing becoming the figure.
              let carry = ''
              res.setEncoding('utf8')
              res.on('data', (chunk: string) => {
                const at = epochNow()
                const frames = (carry + chunk).split('\n\n')
                carry = frames.pop()!
                for (const frame of frames) {
                  const id = /^id: (\d+)$/m.exec(frame)
                  if (id) receive(Number(id[1]), /"type":"([A-Z_]+)"/.exec(frame)?.[1], at)
                }
              })
              res.on('error', () => undefined)
            }
          },
        )
        req.on('error', () => undefined)
        requests.push(req)
      }
    })
    for (let round = 0; round < FOLLOW_ROUNDS + 1; round++) {
      const last = await turn()
      // Every follower has the run's last event.
      while (lastSeen.some((seen) => seen < last)) await sleep(5)
      if (round === 0) for (const r of receipts) r.length = 0 // warm-up
    }
    const all: number[] = []
    const first: number[] = []
    // Per event, the first and the last follower to receive it: the spread is the cost of the fan-out itself.
    const earliest = new Map<number, number>()
    const latest = new Map<number, number>()
    for (const r of receipts) {
      for (const [seq, at] of r) {
        const committed = appendedAt.get(seq)
        if (committed === undefined) throw new Error(`no commit time for seq ${seq}`)
        const latency = at - committed
        all.push(latency)
        // The first event of a run (its RUN_STARTED): what a follower waits for after silence.
        if (runStarts.has(seq)) first.push(latency)
        earliest.set(seq, Math.min(earliest.get(seq) ?? Infinity, latency))
        latest.set(seq, Math.max(latest.get(seq) ?? 0, latency))
      }
    }
    return { all, first, earliest: [...earliest.values()], latest: [...latest.values()], events: receipts[0]!.length }
  } finally {
    for (const req of requests) req.destroy()
    agent.destroy()
    await server.stop()
  }
}
