/**
 * The Mastra stack of the interop suite, run as a child on Node ≥ 22.13 (what `@mastra/core` requires): an `Agent`
 * with the AI SDK's mock model and a `deploy` tool that `suspend()`s for a person, in a `Mastra` with in-memory
 * storage (where suspended tools wait), behind `@ag-ui/mastra`'s `MastraAgent` in both interrupt configurations.
 * `GET /deployments` is what the tool really did. Prints one JSON line with the base URL, then serves until killed.
 */
import { MastraAgent } from '@ag-ui/mastra'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { InMemoryStore } from '@mastra/core/storage'
import { createTool } from '@mastra/core/tools'
import { z } from 'zod'
import { serveAgents } from '../support/agui-endpoint.ts'
import { READY } from '../support/ready.ts'
import { scriptedModel } from './scripted-model.ts'

const deployments: { version: string; environment: string; approved: boolean }[] = []

const deploy = createTool({
  id: 'deploy',
  description: 'Deploy a version to an environment.',
  inputSchema: z.object({ version: z.string(), environment: z.string() }),
  suspendSchema: z.object({ question: z.string() }),
  resumeSchema: z.object({ approved: z.boolean(), reason: z.string().optional() }),
  execute: async ({ version, environment }, context) => {
    const answer = context?.agent?.resumeData
    if (!answer) {
      await context?.agent?.suspend({ question: `Deploy ${version} to ${environment}?` })
      return { deployed: false }
    }
    deployments.push({ version, environment, approved: answer.approved })
    return { deployed: answer.approved, version, environment }
  },
})

const mastra = new Mastra({
  agents: {
    deployer: new Agent({
      id: 'deployer',
      name: 'deployer',
      instructions: 'Deploy what the user asks for.',
      model: scriptedModel(),
      tools: { deploy },
    }),
  },
  storage: new InMemoryStore(),
  logger: false,
})

const agent = (emitInterruptOutcome: boolean) => () =>
  new MastraAgent({
    agentId: 'deployer',
    agent: mastra.getAgent('deployer'),
    resourceId: 'interop',
    emitInterruptOutcome,
  })

const { url } = await serveAgents(
  { '/mastra/outcome': { agent: agent(true) }, '/mastra/legacy': { agent: agent(false) } },
  { views: { '/deployments': () => deployments } },
)
process.stdout.write(`${READY} ${JSON.stringify({ mastra: url })}\n`)
