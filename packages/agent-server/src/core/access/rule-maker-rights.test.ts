import { describe, expect, it } from 'vitest'
import { resolveAgent } from '../../agent/agent.ts'
import { defineTool } from '../../agent/tool.ts'
import { ValidatorCache } from '../../schema/validator-cache.ts'
import { commandAgent } from '../../test-utils/test-agents.ts'
import { DecisionRights } from './decision-rights.ts'

/**
 * A remembered rule or a bounded grant approves a later call only while its maker could decide that call now
 * (docs/approvals.md#remembered-permissions) — and never a call whose organisation policy counts votes: one maker's
 * standing approval cannot stand in for a quorum, a chain or an escalation (docs/approvals.md#organisation-policies).
 */
describe('DecisionRights.ruleMakerMayDecide', () => {
  const deploy = defineTool<{ env: string }>({
    name: 'deploy',
    description: 'Deploy',
    parameters: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
    approval: 'always',
    // Production needs two of sre; staging any one decider.
    policy: (args) => (args.env === 'production' ? { quorum: 2, of: ['ann', 'bo', 'cy'] } : undefined),
    execute: () => 'deployed',
  })
  const agent = resolveAgent(commandAgent([deploy]), new ValidatorCache())
  const store = {
    getOpenBatch: async () => undefined,
    listDecisions: async () => [],
    getBatchOfInterrupt: async () => undefined,
  }
  const rights = new DecisionRights({ store, tools: agent.tools, approvers: ['ann', 'bo', 'cy'], logError: () => {} })
  const use = (env: string) => ({
    tool: agent.tools.get('deploy')!,
    args: { env },
    toolCallId: 'c1',
    owner: 'eng',
    threadId: 't',
  })
  const maker = { ruleId: 'g1', createdBy: 'ann' }

  it('a maker who may decide the call approves it when its policy counts no votes', async () => {
    expect(await rights.ruleMakerMayDecide(maker, use('staging'))).toBe(true)
  })

  it('never when the call needs votes, even from a maker who is one of the voters', async () => {
    expect(await rights.ruleMakerMayDecide(maker, use('production'))).toBe(false)
  })

  it('never for a maker who may not decide the call', async () => {
    expect(await rights.ruleMakerMayDecide({ ruleId: 'g2', createdBy: 'mallory' }, use('staging'))).toBe(false)
  })
})
