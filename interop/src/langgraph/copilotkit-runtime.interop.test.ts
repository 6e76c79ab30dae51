import { afterEach, expect, it } from 'vitest'
import { drive, lastAssistantText, pauseOn, resumeWith, type Drive } from '../support/drive.ts'
import { langGraphStack, lastGraphMessage, threadValues } from '../support/langgraph-stack.ts'

/**
 * The CopilotKit runtime (v2, `POST /agent/:agentId/run`) in front of `@ag-ui/langgraph` (its default
 * configuration) and the LangGraph API server: the same pauses, answered through the runtime
 * (docs/foreign-servers.md#copilotkit-runtime).
 */
const stack = { urls: langGraphStack() }
const drives: Drive[] = []
afterEach(() => {
  for (const d of drives.splice(0)) d.rt.dispose()
})

function driving(agentId: string): Drive {
  const d = drive(`${stack.urls.copilotkit}/agent/${agentId}/run`)
  drives.push(d)
  return d
}

it('CopilotKit runtime → LangGraph interrupt(): pause, approve, the graph deploys', async () => {
  const d = driving('approval')
  const { interrupt, title, batchId } = await pauseOn(d, 'deploy v2.1 to staging')
  expect(title).toBe('Deploy v2.1 to staging?')
  const sent = await resumeWith(d, batchId, {
    interruptId: interrupt.id,
    status: 'resolved',
    payload: { approved: true },
  })
  expect(sent).toEqual([{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }])
  expect(lastAssistantText(d)).toBe('Deployed v2.1 to staging.')
  expect(await threadValues(stack.urls, d.threadId)).toMatchObject({ approved: true, deployed: 'v2.1@staging' })
})

it('CopilotKit runtime → humanInTheLoopMiddleware: pause, edit, the tool runs with the edit', async () => {
  const d = driving('hitl')
  const { interrupt, title, batchId } = await pauseOn(d, 'deploy v2.1 to staging')
  expect(title).toBe('Tool execution requires approval')
  const editedArgs = { version: 'v2.1', environment: 'canary' }
  await resumeWith(d, batchId, {
    interruptId: interrupt.id,
    status: 'resolved',
    payload: { approved: true, editedArgs },
  })
  expect(lastGraphMessage(await threadValues(stack.urls, d.threadId))).toBe('Result: deployed v2.1 to canary')
})
