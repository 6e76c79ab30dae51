import { describe } from 'vitest'
import { admissionCases } from '../store/conformance/admission-cases.ts'
import { approvalCases } from '../store/conformance/approval-cases.ts'
import { historyCases } from '../store/conformance/history-cases.ts'
import { conformanceKit } from '../store/conformance/kit.ts'
import { grantCases } from '../store/conformance/grant-cases.ts'
import type { ConformanceDatabase } from '../store/conformance/kit.ts'
import { ownerCases } from '../store/conformance/owner-cases.ts'
import { outboxCases } from '../store/conformance/outbox-cases.ts'
import { permissionRuleCases } from '../store/conformance/permission-rule-cases.ts'
import { readCases } from '../store/conformance/read-cases.ts'
import { revisionCases } from '../store/conformance/revision-cases.ts'
import { runCases } from '../store/conformance/run-cases.ts'
import { usageCases } from '../store/conformance/usage-cases.ts'
import { toolCheckpointCases } from '../store/conformance/tool-checkpoint-cases.ts'
import { toolClaimCases } from '../store/conformance/tool-claim-cases.ts'
import { staleDecisionCases } from '../store/conformance/stale-decision-cases.ts'
import { steerCases } from '../store/conformance/steer-cases.ts'
import { decisionLinkCases } from '../store/conformance/decision-link-cases.ts'

export type { ConformanceDatabase } from '../store/conformance/kit.ts'

/**
 * The shared Store conformance suite (docs/architecture.md): SQLite and PostgreSQL both run it, and
 * so should a custom store (`@interlude/agent-server/testing`). Every method of the interface is
 * exercised, including races decided by the database between two connections and how much each
 * write adds to the thread's revision. Call it at the top level of a vitest test file; `open`
 * gives every test a fresh, empty database.
 */
export function storeConformance(name: string, open: () => Promise<ConformanceDatabase>): void {
  const kit = conformanceKit(open)
  describe(`Store conformance: ${name}`, () => {
    admissionCases(kit)
    runCases(kit)
    readCases(kit)
    revisionCases(kit)
    approvalCases(kit)
    outboxCases(kit)
    permissionRuleCases(kit)
    grantCases(kit)
    historyCases(kit)
    usageCases(kit)
    ownerCases(kit)
    toolCheckpointCases(kit)
    toolClaimCases(kit)
    staleDecisionCases(kit)
    steerCases(kit)
    decisionLinkCases(kit)
  })
}
