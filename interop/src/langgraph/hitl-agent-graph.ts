import { tool } from '@langchain/core/tools'
import { createAgent, humanInTheLoopMiddleware } from 'langchain'
import { z } from 'zod'
import { ScriptedChatModel } from './scripted-chat-model.ts'

/**
 * `createAgent` with LangChain's `humanInTheLoopMiddleware` in front of a `deploy` tool (approve, edit or reject).
 * The tool's result — with the arguments it really ran with — is the agent's last message, so the thread's state
 * shows which decision was applied.
 */
const deploy = tool(({ version, environment }) => `deployed ${version} to ${environment}`, {
  name: 'deploy',
  description: 'Deploy a version to an environment.',
  schema: z.object({ version: z.string(), environment: z.string() }),
})

export const agent = createAgent({
  model: new ScriptedChatModel({}),
  tools: [deploy],
  middleware: [
    humanInTheLoopMiddleware({
      interruptOn: { deploy: { allowedDecisions: ['approve', 'edit', 'reject'] } },
    }),
  ],
})
