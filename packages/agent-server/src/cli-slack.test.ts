import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { CliOptions } from './cli-args.ts'
import { parseCliArgs } from './cli-args.ts'
import { tempDir } from './test-utils/harness.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
const parse = (argv: string[], env: Record<string, string> = {}) => parseCliArgs(argv, env) as CliOptions
const secret = { INTERLUDE_SLACK_SIGNING_SECRET: 'slack-signing-secret' }
const hook = 'https://hooks.slack.com/services/T1/B1/x'

describe('deciding outside the app on the command line (docs/approvals.md#deciding-outside-the-app)', () => {
  it('--public-url reaches the server; without Slack flags there is no Slack', () => {
    const options = parse(['--public-url', 'https://agent.example.com'])
    expect(options.publicUrl).toBe('https://agent.example.com')
    expect(options.slack).toBeUndefined()
  })

  it('--slack-user-map as pairs or a JSON file, with --slack-webhook', () => {
    expect(parse(['--slack-user-map', 'U1=alice, U2=bob', '--slack-webhook', hook], secret).slack).toEqual({
      users: { U1: 'alice', U2: 'bob' },
      webhookUrl: hook,
    })
    const file = path.join(tmp.dir, 'slack-users.json')
    fs.writeFileSync(file, JSON.stringify({ U9: 'mgr' }))
    expect(parse(['--slack-user-map', file], secret).slack).toEqual({ users: { U9: 'mgr' } })
  })

  it('refuses a missing signing secret, a webhook without a map, bad pairs, files and URLs', () => {
    expect(() => parse(['--slack-user-map', 'U1=alice'])).toThrow(/INTERLUDE_SLACK_SIGNING_SECRET/)
    expect(() => parse(['--slack-webhook', hook], secret)).toThrow(/--slack-user-map/)
    expect(() => parse(['--slack-user-map', 'U1=', '--slack-webhook', hook], secret)).toThrow(/--slack-user-map/)
    expect(() => parse(['--slack-user-map', 'U1=a,U1=b'], secret)).toThrow(/twice/)
    expect(() => parse(['--slack-user-map', path.join(tmp.dir, 'missing.json')], secret)).toThrow(/ENOENT/)
    const list = path.join(tmp.dir, 'list.json')
    fs.writeFileSync(list, '["U1"]')
    expect(() => parse(['--slack-user-map', list], secret)).toThrow(/JSON object/)
    expect(() => parse(['--slack-user-map', 'U1=a', '--slack-webhook', 'ftp://x'], secret)).toThrow(/--slack-webhook/)
  })
})
