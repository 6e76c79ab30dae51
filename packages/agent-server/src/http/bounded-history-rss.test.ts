import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeEvents } from '@interlude/protocol/sse'
import type { ThreadSnapshot } from '@interlude/protocol'
import { launchChild, killChildren } from '../test-utils/child-server.ts'
import type { ChildServer } from '../test-utils/child-server.ts'
import { newThreadId, runInput, tempDir, TOKENS, userMessage } from '../test-utils/harness.ts'

/**
 * Bounded histories (docs/decisions.md#bounded-histories) on a real child process (the CLI, built): a thread filled to its cap by one principal, then 80 parallel
 * snapshots and 80 parallel replays of it. The thread is refused at its cap with 413 THREAD_TOO_LARGE, and the child's
 * resident memory stays below a stated bound (before the fix, one snapshot was the whole history: 80 of a 56 MB
 * thread ran the server out of heap).
 */

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/interlude-server.js')
const MiB = 1024 * 1024
const CAP = 12 * MiB
/** Resident set bound of the child during the parallel reads (baseline ~100 MB; whole-history reads: > 1 GB). */
const RSS_BOUND = 300 * MiB
const tmp = tempDir()
let child: ChildServer | undefined
afterAll(() => {
  killChildren()
  tmp.cleanup()
})

const headers = { Authorization: `Bearer ${TOKENS.alice}`, 'Content-Type': 'application/json' }

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
}

/** Samples the child's RSS until `work` settles; answers the peak. */
async function peakRss(pid: number, work: Promise<unknown>): Promise<number> {
  let peak = rssOf(pid)
  let done = false
  void work.finally(() => (done = true))
  while (!done) {
    peak = Math.max(peak, rssOf(pid))
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await work
  return Math.max(peak, rssOf(pid))
}

describe.runIf(fs.existsSync('/proc/self/status'))('bounded reads of a capped thread (child process)', () => {
  it('fills a thread to its cap (413 THREAD_TOO_LARGE), then 80 parallel snapshots and replays stay below the RSS bound', async () => {
    child = await launchChild(BIN, [
      '--port',
      '0',
      '--pacing-ms',
      '0',
      '--db',
      tmp.dbPath,
      '--token',
      `alice=${TOKENS.alice}`,
      '--thread-max-bytes',
      String(CAP),
      '--model-window-bytes',
      String(2 * MiB),
      // One principal stands in for many clients here: the per-principal quotas are tested in quotas.test.ts.
      '--no-quotas',
    ])
    const pid = child.child.pid!
    const threadId = newThreadId()
    let refused: { status: number; body: { error?: { code: string } } } | undefined
    // The attack as a bounded loop: ~900 KB messages into one thread until the server refuses.
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const response = await fetch(`${child.baseUrl}/runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify(runInput(threadId, [userMessage(`${i} ${'m'.repeat(900 * 1024)}`)])),
      })
      if (response.status === 200) await response.text()
      else refused = { status: response.status, body: (await response.json()) as { error?: { code: string } } }
    }
    expect(refused).toMatchObject({ status: 413, body: { error: { code: 'THREAD_TOO_LARGE' } } })
    const baseline = rssOf(pid)

    const snapshots = Promise.all(
      Array.from({ length: 80 }, async () => {
        const response = await fetch(`${child!.baseUrl}/threads/${threadId}`, { headers })
        expect(response.status).toBe(200)
        return (await response.json()) as ThreadSnapshot
      }),
    )
    const snapshotPeak = await peakRss(pid, snapshots)
    const first = (await snapshots)[0]!
    // One page: the newest message (the page's byte budget is 1 MiB) and a cursor to the rest.
    expect(first.hasMoreMessages).toBe(true)
    expect(first.messages.length).toBeGreaterThan(0)
    expect(JSON.stringify(first.messages).length).toBeLessThanOrEqual(MiB)
    expect(first.messageCount).toBeGreaterThan(20)

    const replays = Promise.all(
      Array.from({ length: 80 }, async () => {
        const response = await fetch(`${child!.baseUrl}/threads/${threadId}/events`, { headers })
        expect(response.status).toBe(200)
        let count = 0
        for await (const decoded of decodeEvents(response.body!)) if (decoded.event) count += 1
        return count
      }),
    )
    const replayPeak = await peakRss(pid, replays)
    expect(new Set(await replays).size).toBe(1)

    console.info(
      `RSS baseline ${(baseline / MiB).toFixed(0)} MB, peak during 80 snapshots ${(snapshotPeak / MiB).toFixed(0)} MB, ` +
        `during 80 replays ${(replayPeak / MiB).toFixed(0)} MB (bound ${RSS_BOUND / MiB} MB)`,
    )
    expect(snapshotPeak).toBeLessThan(RSS_BOUND)
    expect(replayPeak).toBeLessThan(RSS_BOUND)
  }, 120_000)
})
