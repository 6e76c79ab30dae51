import { END, interrupt, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph'
import { AIMessage } from '@langchain/core/messages'
import { z } from 'zod'
import { deployArgs } from './scripted-chat-model.ts'

/**
 * A one-node graph that asks with LangGraph's `interrupt()` and applies the answer: `{ approved: true }` deploys,
 * anything else does not. What it did lands in the graph's state (`approved`, `deployed`, the final message). The state
 * is a `StateSchema`, so the API server reads its JSON schema at runtime instead of compiling this file with
 * TypeScript (which takes about 20 s on the first request).
 */
const State = new StateSchema({
  messages: MessagesValue,
  approved: z.boolean().optional(),
  deployed: z.string().optional(),
})

interface Answer {
  readonly approved?: unknown
  readonly reason?: unknown
}

export const graph = new StateGraph(State)
  .addNode('ask_approval', (state) => {
    const text = String(state.messages.at(-1)?.content ?? '')
    const { version, environment } = deployArgs(text)
    const answer = interrupt<unknown, Answer>({
      question: `Deploy ${version} to ${environment}?`,
      version,
      environment,
    })
    const approved = answer?.approved === true
    const reason = typeof answer?.reason === 'string' ? ` (${answer.reason})` : ''
    return {
      approved,
      deployed: approved ? `${version}@${environment}` : undefined,
      messages: [new AIMessage(approved ? `Deployed ${version} to ${environment}.` : `Not deployed${reason}.`)],
    }
  })
  .addEdge(START, 'ask_approval')
  .addEdge('ask_approval', END)
  .compile()
