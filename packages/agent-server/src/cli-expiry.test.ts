import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { ThreadSnapshot } from '@interlude/protocol'
import { killChildren, launchChild, until } from './test-utils/child-server.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  runInput,
  tempDir,
  textOf,
  TOKENS,
  userMessage,
} from './test-utils/harness.ts'

/**
 * The stranded thread, end to end on the real CLI (docs/approvals.md#deadlines): `--interrupt-ttl 1`, "deploy v2",
 * let the deadline pass, "hello". Before deadlines had policies the last answer was `409 INTERRUPTS_PENDING` forever;
 * now the sweep (or the first touch) denies the batch, the model is told, and the thread takes the new input.
 */
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/interlude-server.js')
const tmp = tempDir()
afterAll(() => {
  killChildren()
  tmp.cleanup()
})

describe('interlude-server --interrupt-ttl', () => {
  it('an expired approval never strands the thread: new input is admitted after the deadline', async () => {
    const server = await launchChild(BIN, [
      '--port',
      '0',
      '--pacing-ms',
      '0',
      '--db',
      path.join(tmp.dir, 'ttl.db'),
      '--interrupt-ttl',
      '1',
      '--token',
      `alice=${TOKENS.alice}`,
    ])
    const threadId = newThreadId()
    const paused = await postRun(server, runInput(threadId, [userMessage('deploy v2')]))
    const interrupts = interruptsOf(paused.events)
    expect(interrupts.map((i) => i.metadata?.onExpiry)).toEqual(['deny', 'deny'])
    const deadline = Date.parse(interrupts[0]!.expiresAt!)

    const answers: { code: string | undefined; late: boolean }[] = []
    const hello = runInput(threadId, [userMessage('hello')])
    const admitted = await until(async () => {
      const sentAt = Date.now()
      const r = await postRun(server, hello)
      if (r.status === 200) return r
      answers.push({ code: r.error?.code, late: sentAt >= deadline })
      await new Promise((resolve) => setTimeout(resolve, 50))
      return undefined
    }, 'new input to be admitted after the deadline')

    expect(textOf(admitted.events)).toMatch(/^I can publish and deploy releases/)
    // Sent after the deadline, the answer is only ever "busy, retry" — never pending again.
    for (const answer of answers)
      expect(answer.late ? ['THREAD_BUSY'] : ['INTERRUPTS_PENDING', 'THREAD_BUSY']).toContain(answer.code)
    const snapshot = (await (
      await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: authHeader('alice') })
    ).json()) as ThreadSnapshot
    expect(snapshot.decisions).toMatchObject([{ decidedBy: 'system:expiry', via: 'expiry' }])
    const summary = snapshot.messages.filter((m) => m.role === 'assistant').map((m) => m.content)
    expect(summary).toContain(
      'Nothing ran. Summary: publish_release v2 was denied (expired); deploy v2 to staging was denied (expired).',
    )
    expect(await server.stop()).toBe(0)
  })
})
