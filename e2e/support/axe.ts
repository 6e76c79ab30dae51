import AxeBuilder from '@axe-core/playwright'
import type { Page, TestInfo } from '@playwright/test'

export interface AxeFinding {
  readonly id: string
  readonly impact: string
  readonly help: string
  readonly targets: readonly string[]
}

/**
 * axe-core on the page as it is now (WCAG 2.x A and AA rules plus axe's best practices). Every finding is attached to
 * the test's report; the caller asserts on the impacts it refuses.
 */
export async function audit(page: Page, testInfo: TestInfo, name: string): Promise<AxeFinding[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze()
  const findings = results.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? 'unknown',
    help: v.help,
    targets: v.nodes.map((n) => n.target.join(' ')),
  }))
  await testInfo.attach(`axe-${name}`, { body: JSON.stringify(findings, null, 2), contentType: 'application/json' })
  return findings
}

/** The findings that fail the audit: serious and critical ones, and (from a clean baseline) moderate ones too. */
export function blocking(findings: readonly AxeFinding[]): AxeFinding[] {
  return findings.filter((f) => f.impact === 'critical' || f.impact === 'serious' || f.impact === 'moderate')
}
