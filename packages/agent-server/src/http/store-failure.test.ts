import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import type { RunErrorEvent } from '@interlude/protocol'
import type { ToolDefinition } from '../agent/tool.ts'
import type { ModelProvider } from '../models/model.ts'
import { scriptedModel } from '../models/scripted.ts'
import { startServer } from '../server.ts'
import type { RunningServer } from '../server.ts'
import type { SqliteStore } from '../store/sqlite/sqlite-store.ts'
import { until } from '../test-utils/child-server.ts'
import {
  authHeader,
  interruptsOf,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  TOKENS,
  types,
  userMessage,
} from '../test-utils/harness.ts'
import { commandAgent, commandScript, gatedModel } from '../test-utils/test-agents.ts'

/**
 * A full disk (docs/decisions.md#operating-it): the SQLite file lives on a 4 MiB tmpfs mounted for this test (we run as
 * root); a filler file takes the rest of it. If mounting is refused, the test says so and falls back to SQLite's
 * `max_page_count`, which yields the same SQLITE_FULL.
 */

interface Disk {
  readonly dir: string
  readonly mounted: boolean
  fill(store: SqliteStore): void
  free(store: SqliteStore): void
  dispose(): void
}

function smallDisk(): Disk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-full-'))
  let mounted = false
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' })
    mounted = true
  } catch (error) {
    console.warn(`store-failure.test: cannot mount a tmpfs (${String(error)}); falling back to PRAGMA max_page_count`)
  }
  const filler = path.join(dir, 'filler')
  return {
    dir,
    mounted,
    fill(store) {
      if (!mounted) {
        const pages = store.database.pragma('page_count', { simple: true }) as number
        store.database.pragma(`max_page_count = ${pages}`)
        return
      }
      const fd = fs.openSync(filler, 'w')
      const chunk = Buffer.alloc(64 * 1024, 1)
      try {
        for (;;) fs.writeSync(fd, chunk)
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error
      }
      // The last few bytes too, so that not even one page fits.
      try {
        for (;;) fs.writeSync(fd, chunk, 0, 512)
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error
      } finally {
        fs.closeSync(fd)
      }
    },
    free(store) {
      if (!mounted) store.database.pragma('max_page_count = 1073741823')
      else fs.rmSync(filler, { force: true })
    },
    dispose() {
      if (mounted) execFileSync('umount', ['-l', dir], { stdio: 'pipe' })
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

let cleanup: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step()
  cleanup = []
})

describe('a store that cannot persist (SQLite on a full disk)', () => {
  it('ends the open stream with RUN_ERROR STORE_UNAVAILABLE, fails readiness, answers 503, and recovers once space is back', async () => {
    const disk = smallDisk()
    cleanup.push(() => disk.dispose())
    let deployed = 0
    const deploy: ToolDefinition = {
      name: 'deploy',
      description: 'deploy',
      parameters: { type: 'object' },
      approval: 'always',
      execute: () => ({ deployed: ++deployed }),
    }
    // 'wait' holds the model until the disk is full; anything else follows the command script.
    const gate = gatedModel()
    const scripted = scriptedModel(commandScript)
    const model: ModelProvider = {
      name: 'mixed',
      stream: (request) => {
        const last = request.messages.at(-1)
        return last?.role === 'user' && last.content === 'wait' ? gate.model.stream(request) : scripted.stream(request)
      },
    }
    const logged: string[] = []
    const server: RunningServer = await startServer({
      dbPath: path.join(disk.dir, 'agent.db'),
      tokens: TOKENS,
      agent: commandAgent([deploy], { model }),
      runLeaseMs: 400,
      pollMs: 50,
      logError: (message) => logged.push(message),
    })
    cleanup.push(() => server.close())
    const store = server.store as SqliteStore
    const ready = () => fetch(`${server.baseUrl}/health?ready`)

    // A paused approval, made while there is space.
    const approvalThread = newThreadId()
    const paused = await postRun(
      server,
      runInput(approvalThread, [userMessage(JSON.stringify({ toolCalls: [{ name: 'deploy', args: {} }] }))]),
    )
    const [interrupt] = interruptsOf(paused.events)
    expect(interrupt).toBeDefined()
    expect((await ready()).status).toBe(200)

    // A run in flight when the disk fills up.
    const busyThread = newThreadId()
    const inFlight = postRun(server, runInput(busyThread, [userMessage('wait')]))
    await gate.started
    disk.fill(store)
    gate.release()
    const ended = await inFlight
    expect(ended.status).toBe(200)
    const last = ended.events.at(-1) as RunErrorEvent
    expect(last.type).toBe(EventType.RUN_ERROR)
    expect(last.code).toBe('STORE_UNAVAILABLE')
    // The notice is not part of the log: no `id:` line.
    expect(ended.ids.at(-1)).toBeUndefined()
    expect(types(ended.events)[0]).toBe(EventType.RUN_STARTED)

    // Readiness fails while writes fail; liveness (reads) still answers.
    const notReady = await ready()
    expect(notReady.status).toBe(503)
    expect(((await notReady.json()) as { error: { code: string } }).error.code).toBe('STORE_UNAVAILABLE')

    // A new request: 503 STORE_UNAVAILABLE with Retry-After, and nothing admitted.
    const approve = resumeInput(approvalThread, [
      { interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } },
    ])
    const refused = await postRun(server, approve)
    expect(refused.status).toBe(503)
    expect(refused.error?.code).toBe('STORE_UNAVAILABLE')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.raw).not.toMatch(/SQLITE|disk|full/i)
    expect(deployed).toBe(0)

    // Space is back: readiness recovers, and the lost run's lease lapses and recovery ends it.
    disk.free(store)
    await until(async () => (await ready()).status === 200, 'readiness to recover')
    await until(async () => {
      const snapshot = await fetch(`${server.baseUrl}/threads/${busyThread}`, { headers: authHeader('alice') })
      return ((await snapshot.json()) as { status: string }).status !== 'running'
    }, 'the lost run to be ended by recovery')

    // The same resume (same runId) now executes exactly once; a retry replays it.
    const resumed = await postRun(server, approve)
    expect(resumed.status).toBe(200)
    expect(resumed.events.at(-1)?.type).toBe(EventType.RUN_FINISHED)
    expect(deployed).toBe(1)
    const retried = await postRun(server, approve)
    expect(retried.status).toBe(200)
    expect(retried.raw).toBe(resumed.raw)
    expect(deployed).toBe(1)
  })
})
