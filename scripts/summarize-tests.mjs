// Prints one closing line "N passed, N failed" over the Vitest (and Playwright) JSON reports.
import { existsSync, readFileSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
const perProject = new Map()
// Named at the end so the last lines of a red run say what failed (CI keeps only the tail of the output).
const failures = []
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
        const where = file.name.replace(`${process.cwd()}/`, '')
        const why = String(t.failureMessages?.[0] ?? '')
          .split('\n')[0]
          ?.slice(0, 200)
        failures.push(`${where}${suffix} › ${t.fullName ?? t.title}: ${why}`)
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
  const walk = (suite) => {
    for (const spec of suite.specs ?? []) if (!spec.ok) failures.push(`e2e/${spec.file} › ${spec.title}`)
    for (const child of suite.suites ?? []) walk(child)
  }
  for (const suite of report.suites ?? []) walk(suite)
}
for (const failure of failures) console.log(`  failed: ${failure}`)
for (const [name, row] of perProject) console.log(`  ${name}: ${row.passed} passed, ${row.failed} failed`)
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
