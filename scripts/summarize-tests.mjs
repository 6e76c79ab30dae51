// Prints one closing line "N passed, N failed" over the Vitest (and Playwright) JSON reports.
import { existsSync, readFileSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
const perProject = new Map()
// The Node 24 run (scripts/test-node24.sh) counts as its own rows, `<project> (Node 24)`.
for (const [results, suffix] of [
  ['.vitest-results.json', ''],
  ['.vitest-results-node24.json', ' (Node 24)'],
]) {
  if (!existsSync(results)) continue
  const report = JSON.parse(readFileSync(results, 'utf8'))
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      const project = (/\/(?:packages|apps)\/([^/]+)\//.exec(file.name)?.[1] ?? 'other') + suffix
      const row = perProject.get(project) ?? { passed: 0, failed: 0 }
      if (t.status === 'passed') {
        passed++
        row.passed++
      } else if (t.status === 'failed') {
        failed++
        row.failed++
      } else skipped++
      perProject.set(project, row)
    }
  }
}
if (existsSync('e2e/artifacts/results.json')) {
  const report = JSON.parse(readFileSync('e2e/artifacts/results.json', 'utf8'))
  const stats = report.stats ?? {}
  const row = { passed: stats.expected ?? 0, failed: (stats.unexpected ?? 0) + (stats.flaky ?? 0) }
  passed += row.passed
  failed += row.failed
  skipped += stats.skipped ?? 0
  perProject.set('e2e', row)
}
for (const [name, row] of perProject) console.log(`  ${name}: ${row.passed} passed, ${row.failed} failed`)
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
