import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ARTIFACTS, REPO_ROOT, SCREENSHOTS, SERVER_BIN } from './support/paths.ts'

/** Newest modification time of any file below `dir` (0 when missing). */
function newest(dir: string): number {
  if (!existsSync(dir)) return 0
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

function run(args: readonly string[]): void {
  execFileSync('pnpm', args, { cwd: REPO_ROOT, stdio: 'inherit' })
}

/**
 * Builds what the real server needs: the libraries (only when a `dist` is missing or older than
 * its `src`; the README test command has built them already) and the workbench, which the server
 * serves with `--static`, and the interop package's `useChat` page (tests/foreign-langgraph.spec.ts).
 * `E2E_SKIP_BUILD=1` skips all, `E2E_SKIP_LIBRARY_BUILD=1` only the libraries.
 */
export default function globalSetup(): void {
  mkdirSync(SCREENSHOTS, { recursive: true })
  mkdirSync(ARTIFACTS, { recursive: true })
  if (process.env.E2E_SKIP_BUILD !== '1') {
    const stale = ['protocol', 'client', 'react', 'agent-server'].some((name) => {
      const pkg = join(REPO_ROOT, 'packages', name)
      return newest(join(pkg, 'src')) > newest(join(pkg, 'dist'))
    })
    if (stale && process.env.E2E_SKIP_LIBRARY_BUILD !== '1') run(['-r', '--filter', './packages/**', 'run', 'build'])
    run(['--filter', '@interlude/workbench', 'run', 'build'])
    run(['--filter', '@interlude/interop', 'run', 'build:page'])
  }
  if (!existsSync(SERVER_BIN)) throw new Error(`The agent server CLI is missing: ${SERVER_BIN}`)
}
