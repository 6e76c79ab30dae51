import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { CliOptions } from './cli-args.ts'
import { parseCliArgs } from './cli-args.ts'
import { NO_PRINCIPAL_QUOTAS } from './config/limits.ts'
import { tempDir } from './test-utils/harness.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
const parse = (argv: string[], env: Record<string, string> = {}) => parseCliArgs(argv, env) as CliOptions

describe('tokens from a file or the environment (docs/decisions.md#operating-it)', () => {
  it('--tokens-file: name=secret lines, comments and blank lines; merged with INTERLUDE_TOKENS and --token', () => {
    const file = path.join(tmp.dir, 'tokens')
    fs.writeFileSync(file, '# principals\nalice=alice-secret-token\n\n  bob=bob,secret-with-comma  \n')
    const options = parse(['--tokens-file', file, '--token', 'eng=eng-secret-token'], {
      INTERLUDE_TOKENS: 'mgr=mgr-secret-token, ops=ops-secret-token',
    })
    expect(options.tokens).toEqual({
      eng: 'eng-secret-token',
      alice: 'alice-secret-token',
      bob: 'bob,secret-with-comma',
      mgr: 'mgr-secret-token',
      ops: 'ops-secret-token',
    })
    expect(options.tokensOnCommandLine).toBe(true)
    expect(parse([], { INTERLUDE_TOKENS: 'alice=alice-secret-token' }).tokensOnCommandLine).toBe(false)
  })

  it('refuses whitespace inside a secret, a secret shared by two principals, a principal named twice, a bad line', () => {
    const file = path.join(tmp.dir, 'bad-tokens')
    fs.writeFileSync(file, 'alice=has space inside\n')
    expect(() => parse(['--tokens-file', file])).toThrow(/whitespace/)
    expect(() => parse([], { INTERLUDE_TOKENS: 'a=same-secret-value,b=same-secret-value' })).toThrow(/share one token/)
    expect(() => parse(['--token', 'alice=one-secret-value'], { INTERLUDE_TOKENS: 'alice=two-secret-value' })).toThrow(
      /alice.*two tokens/,
    )
    fs.writeFileSync(file, 'alice=alice-secret-token\njust-a-secret\n')
    expect(() => parse(['--tokens-file', file])).toThrow(/line 2/)
    expect(() => parse(['--tokens-file', path.join(tmp.dir, 'missing')])).toThrow(/ENOENT/)
  })

  it('a malformed --token does not echo its secret', () => {
    expect(() => parse(['--token', 'no-equals-sign-secret'])).toThrow(/name=secret/)
    try {
      parse(['--token', '=the-secret'])
    } catch (error) {
      expect(String(error)).not.toContain('the-secret')
    }
  })

  it('PostgreSQL without tokens needs INTERLUDE_SESSION_SECRET', () => {
    expect(() => parse(['--db', 'postgres://u@127.0.0.1/test'])).toThrow(/INTERLUDE_SESSION_SECRET/)
    expect(
      parse(['--db', 'postgres://u@127.0.0.1/test'], { INTERLUDE_SESSION_SECRET: 'one-secret-for-all' }).tokens,
    ).toBeUndefined()
  })

  it('session flags', () => {
    const options = parse(['--session-max-age', '3600', '--secure-cookies', '--trust-proxy'])
    expect(options).toMatchObject({ sessionMaxAgeSeconds: 3600, secureCookies: true, trustProxy: true })
    expect(parse([])).toMatchObject({ sessionMaxAgeSeconds: undefined, secureCookies: 'auto', trustProxy: false })
    expect(() => parse(['--session-max-age', '0'])).toThrow(/session-max-age/)
  })
})

describe('quota and limit flags (docs/decisions.md#operating-it)', () => {
  it('map to limits; only the flags given; 0 turns one off; --no-quotas turns every per-principal quota off', () => {
    expect(parse([]).limits).toEqual({})
    expect(
      parse([
        '--max-runs-per-principal',
        '4',
        '--max-streams-per-principal',
        '0',
        '--max-new-threads-per-minute',
        '10',
        '--max-requests-per-second',
        '20',
        '--max-body-bytes',
        '1048576',
        '--max-buffered-body-bytes',
        '8388608',
        '--body-idle-timeout-ms',
        '5000',
        '--headers-timeout-ms',
        '4000',
        '--request-timeout-ms',
        '30000',
        '--max-connections',
        '500',
        '--max-connections-per-ip',
        '0',
      ]).limits,
    ).toEqual({
      maxConcurrentRunsPerPrincipal: 4,
      maxOpenStreamsPerPrincipal: 0,
      maxNewThreadsPerMinute: 10,
      maxRequestsPerSecond: 20,
      maxBodyBytes: 1048576,
      maxBufferedBodyBytes: 8388608,
      bodyIdleTimeoutMs: 5000,
      headersTimeoutMs: 4000,
      requestTimeoutMs: 30000,
      maxConnections: 500,
      maxConnectionsPerIp: 0,
    })
    expect(parse(['--no-quotas']).limits).toEqual(NO_PRINCIPAL_QUOTAS)
    expect(() => parse(['--max-connections=-1'])).toThrow(/non-negative integer/)
    expect(() => parse(['--max-requests-per-second', '1.5'])).toThrow(/non-negative integer/)
    expect(() => parse(['--max-body-bytes', '0'])).toThrow(/positive/)
  })

  it('--no-admission-turns turns admission turns off; they are on by default', () => {
    expect(parse([]).admissionTurns).toBe(true)
    expect(parse(['--no-admission-turns']).admissionTurns).toBe(false)
  })
})

describe('--oncall (docs/demo-agent.md)', () => {
  it('is repeatable or a comma list, without duplicates; blank names are refused', () => {
    expect(parse(['--oncall', 'pager', '--oncall', 'ops,pager']).oncall).toEqual(['pager', 'ops'])
    expect(parse([]).oncall).toEqual([])
    expect(() => parse(['--oncall', 'pager,'])).toThrow(/--oncall/)
  })
})
