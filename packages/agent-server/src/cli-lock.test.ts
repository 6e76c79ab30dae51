import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { EventType } from '@interlude/protocol'
import { newThreadId, postRun, runInput, tempDir, userMessage } from './test-utils/harness.ts'

/**
 * One process per SQLite file (docs/decisions.md#operating-it): a second process without `--shared` on the same SQLite file refuses to start (the OS lock of
 * store/sqlite/process-lock.ts), instead of closing the first one's runs. Real CLI child processes.
 */

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli.js')
const tmp = tempDir()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})
afterAll(() => tmp.cleanup())

type Started =
  | { kind: 'listening'; url: string; child: ChildProcessWithoutNullStreams }
  | { kind: 'exited'; code: number | null; stderr: string }

/** Starts the CLI; resolves when it listens or when it exits (whichever comes first). */
function start(args: string[]): Promise<Started> {
  if (!fs.existsSync(DIST))
    throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build" first`)
  const child = spawn(process.execPath, [BIN, '--port', '0', ...args], { stdio: 'pipe' })
  children.push(child)
  return new Promise((resolve) => {
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (match) resolve({ kind: 'listening', url: match[1]!, child })
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')))
    child.once('exit', (code) => resolve({ kind: 'exited', code, stderr: err }))
  })
}

const listening = async (args: string[]) => {
  const started = await start(args)
  if (started.kind !== 'listening') throw new Error(`did not start: ${started.stderr}`)
  return { ...started, baseUrl: `${started.url}/api/agent` }
}

describe('one exclusive process per SQLite file', () => {
  it("a second process without --shared refuses to start, and the first one's run finishes untouched", async () => {
    const db = path.join(tmp.dir, 'exclusive.db')
    const first = await listening(['--db', db, '--token', 'alice=alice-secret-token', '--pacing-ms', '20'])
    const threadId = newThreadId()
    // A run in flight on the first process (paced, so it is still running when the second one starts).
    const inFlight = postRun(first, runInput(threadId, [userMessage('hello there')]))

    const second = await start(['--db', db, '--token', 'alice=alice-secret-token'])
    expect(second.kind).toBe('exited')
    if (second.kind !== 'exited') return
    expect(second.code).toBe(1)
    expect(second.stderr).toContain(`Another interlude-server process is using ${db}`)
    expect(second.stderr).toContain('--shared')
    expect(second.stderr).not.toMatch(/\n\s+at /) // a message, not a stack

    const shared = await start(['--db', db, '--shared', '--token', 'alice=alice-secret-token'])
    expect(shared.kind === 'exited' && shared.stderr).toMatch(/started without --shared is using/)

    const run = await inFlight
    expect(run.events.at(-1)?.type).toBe(EventType.RUN_FINISHED)

    // Once the first process is gone (even by SIGKILL: the OS drops its lock), the file can be served again.
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    const after = await listening(['--db', db, '--token', 'alice=alice-secret-token'])
    expect((await fetch(`${after.baseUrl}/health`)).status).toBe(200)
  })

  it('--shared processes share the file, and an exclusive one refuses while they run', async () => {
    const db = path.join(tmp.dir, 'shared.db')
    const a = await listening(['--db', db, '--shared', '--token', 'alice=alice-secret-token'])
    const b = await listening(['--db', db, '--shared', '--token', 'alice=alice-secret-token'])
    expect((await fetch(`${a.baseUrl}/health`)).status).toBe(200)
    expect((await fetch(`${b.baseUrl}/health`)).status).toBe(200)
    const exclusive = await start(['--db', db, '--token', 'alice=alice-secret-token'])
    expect(exclusive.kind === 'exited' && exclusive.code).toBe(1)
  })
})
