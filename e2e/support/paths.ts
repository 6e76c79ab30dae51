import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const REPO_ROOT = resolve(E2E_DIR, '..')
export const WORKBENCH_DIST = resolve(REPO_ROOT, 'apps/workbench/dist')
export const SERVER_BIN = resolve(REPO_ROOT, 'packages/agent-server/bin/interlude-server.js')
/** The interop package's small `useChat` page, built for its real foreign servers. */
export const INTEROP_PAGE_DIST = resolve(REPO_ROOT, 'interop/page-dist')
export const ARTIFACTS = resolve(E2E_DIR, 'artifacts')
export const SCREENSHOTS = resolve(ARTIFACTS, 'screenshots')
export const SHIPPED_RECORDINGS_DIR = resolve(REPO_ROOT, 'apps/workbench/src/recordings')
