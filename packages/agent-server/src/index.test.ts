import fs from 'node:fs'
import { describe, expect, it } from 'vitest'

/** The package manifest, for the `exports` map each entry is published under. */
const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, Record<string, string>>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

describe('public API of @interlude/agent-server', () => {
  it('the main entry exports exactly what an app and a custom-store author need', async () => {
    // Changing this list changes the package's public API: say so in the change.
    expect(Object.keys(await import('./index.ts')).sort()).toEqual([
      'DEFAULT_LIMITS',
      // The typed error of a cancelled `ctx.interrupt` (docs/approvals.md#asking-from-inside-a-tool).
      'InterruptCancelledError',
      // The per-principal quotas off, for load tests (README "Quotas and limits", docs/decisions.md#operating-it).
      'NO_PRINCIPAL_QUOTAS',
      'RunNotActiveError',
      // Every setting's default, which the options' docs and the CLI's usage refer to.
      'SERVER_DEFAULTS',
      // Startup failures an app may catch: a missing or unusable peer or key, a SQLite file another process holds
      // (docs/decisions.md#platforms).
      'SetupError',
      'SqliteLockedError',
      'anonymousSessionCookie',
      'askUser',
      'bearerTokens',
      // The store's thread key of (owner, client thread id), and the id back
      // (docs/decisions.md#threads-keyed-per-owner).
      'clientThreadId',
      'createAgentServer',
      'createPostgresStore',
      'createSqliteStore',
      // Agents as tools (docs/approvals.md#subagents).
      'defineSubagentTool',
      'defineTool',
      'generateSessionSecret',
      'openaiModel',
      'scriptedModel',
      'startServer',
      'threadKey',
    ])
  })

  it('publishes ".", "/demo" and "/testing", each from source (@interlude/source) and from dist', () => {
    expect(manifest.exports).toEqual({
      '.': { '@interlude/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      './demo': {
        '@interlude/source': './src/demo/index.ts',
        types: './dist/demo/index.d.ts',
        default: './dist/demo/index.js',
      },
      './testing': {
        '@interlude/source': './src/testing.ts',
        types: './dist/testing.d.ts',
        default: './dist/testing.js',
      },
    })
    const root = new URL('../', import.meta.url)
    for (const entry of Object.values(manifest.exports)) {
      expect(fs.existsSync(new URL(entry['@interlude/source']!, root))).toBe(true)
    }
  })

  it('vitest (imported by "/testing" only) is an optional peer dependency', () => {
    expect(manifest.peerDependencies?.vitest).toBeDefined()
    expect(manifest.peerDependenciesMeta?.vitest?.optional).toBe(true)
  })
})
