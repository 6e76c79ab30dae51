/** Settings and helpers shared by the approvals bench (../approvals-bench.ts) and its parts. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PostRun } from '../bench-utils.ts'
import { percentile } from '../bench-utils.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const ENG = { Authorization: 'Bearer eng-secret' }
export const MGR = { Authorization: 'Bearer mgr-secret' }
export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interlude-approvals-bench-'))
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
export const ms = (n: number) => `${n.toFixed(2)} ms`
export const stats = (xs: number[]) =>
  `p50 ${ms(percentile(xs, 50))}, p90 ${ms(percentile(xs, 90))}, p99 ${ms(percentile(xs, 99))}, max ${ms(Math.max(...xs))}`

export function poster(baseUrl: string, auth: Record<string, string>): PostRun {
  return (body: unknown) =>
    fetch(`${baseUrl}/runs`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
}
