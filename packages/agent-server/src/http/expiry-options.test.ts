import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { ExpiryPolicy } from '@interlude/protocol'
import { askUser } from '../agent/ask-user.ts'
import { defineTool } from '../agent/tool.ts'
import { bearerTokens } from '../auth/authenticate.ts'
import { parseCliArgs } from '../cli-args.ts'
import { releaseAssistant } from '../demo/release-assistant.ts'
import { startServer } from '../server.ts'
import type { Store } from '../store/store.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import { tempDir, TOKENS } from '../test-utils/harness.ts'
import type { AgentServerOptions } from './app.ts'
import { createAgentServer } from './app.ts'

/** Bad deadline options fail where they are given, with a message naming them, before anything starts. */
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/interlude-server.js')
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js')

/** A store that records every call: construction must not touch it. */
function untouchedStore(): { store: Store; calls: string[] } {
  const calls: string[] = []
  const store = new Proxy({ kind: 'spy' } as Store, {
    get(target, prop) {
      if (prop === 'kind' || prop === 'then') return Reflect.get(target, prop)
      return () => {
        calls.push(String(prop))
        throw new Error(`store.${String(prop)} called`)
      }
    },
  })
  return { store, calls }
}

const tool = (extra: Record<string, unknown>) =>
  defineTool({
    name: 'deploy',
    description: 'deploy',
    parameters: { type: 'object' },
    approval: 'always',
    execute: () => 'ok',
    ...extra,
  })

describe('bad deadline options', () => {
  it.each<[string, Partial<AgentServerOptions>, RegExp]>([
    ['tool timeout 0', { agent: commandAgent([tool({ timeout: 0 })]) }, /Tool "deploy": timeout must be a positive/],
    ['tool timeout -5', { agent: commandAgent([tool({ timeout: -5 })]) }, /Tool "deploy": timeout must be a positive/],
    [
      'askUser timeout NaN',
      { agent: commandAgent([askUser({ responseSchema: { type: 'object' }, timeout: Number.NaN })]) },
      /Tool "ask_user": timeout must be a positive/,
    ],
    [
      'tool onExpiry',
      { agent: commandAgent([tool({ onExpiry: 'later' })]) },
      /Tool "deploy": onExpiry must be one of deny, cancel, keep \(got "later"\)/,
    ],
    ['server onExpiry', { onExpiry: 'never' as ExpiryPolicy }, /^onExpiry must be one of deny, cancel, keep/],
    ['expirySweepMs', { expirySweepMs: -1 }, /expirySweepMs must be 0 or a positive number/],
  ])('%s: createAgentServer throws and touches nothing', (_name, options, message) => {
    const { store, calls } = untouchedStore()
    expect(() =>
      createAgentServer({ agent: releaseAssistant(), authenticate: bearerTokens(TOKENS), ...options, store }),
    ).toThrow(message)
    expect(calls).toEqual([])
  })

  it('startServer rejects and closes its store (the same file opens again at once)', async () => {
    const tmp = tempDir()
    try {
      await expect(startServer({ dbPath: tmp.dbPath, onExpiry: 'soon' as ExpiryPolicy })).rejects.toThrow(RangeError)
      const server = await startServer({ dbPath: tmp.dbPath, tokens: TOKENS, onExpiry: 'keep' })
      await server.close()
    } finally {
      tmp.cleanup()
    }
  })

  it('--on-expiry: parsed, and an unknown policy exits with status 2 and the usage', async () => {
    expect(parseCliArgs(['--on-expiry', 'keep'])).toMatchObject({ onExpiry: 'keep' })
    expect(parseCliArgs([])).toMatchObject({ onExpiry: undefined })
    expect(() => parseCliArgs(['--on-expiry', 'maybe'])).toThrow('--on-expiry must be deny, cancel or keep')
    if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: run "pnpm --filter @interlude/agent-server build"`)
    const child = spawn(process.execPath, [BIN, '--on-expiry', 'maybe', '--port', '0'], { stdio: 'pipe' })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')))
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(2)
    expect(err).toMatch(/--on-expiry must be deny, cancel or keep/)
    expect(err).toMatch(/Usage: interlude-server/)
    expect(out).not.toMatch(/listening/)
  })
})
