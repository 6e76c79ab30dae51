import { afterEach, describe, expect, it } from 'vitest'
import { drive, lastAssistantText, pauseOn, resumeWith, type Drive } from '../support/drive.ts'
import { langGraphStack, lastGraphMessage, threadValues } from '../support/langgraph-stack.ts'

/**
 * LangChain's `humanInTheLoopMiddleware` in `createAgent` (a scripted chat model), served by the real LangGraph API
 * server behind `@ag-ui/langgraph` (two of its configurations) and behind the CopilotKit runtime: the form's approval
 * becomes the middleware's decisions (docs/foreign-servers.md#langgraph).
 */
const stack = { urls: langGraphStack() }
const drives: Drive[] = []
afterEach(() => {
  for (const d of drives.splice(0)) d.rt.dispose()
})

async function paused(path: string) {
  const d = drive(`${path.startsWith('/agent/') ? stack.urls.copilotkit : stack.urls.agui}${path}`)
  drives.push(d)
  const pause = await pauseOn(d, 'deploy v2.1 to staging')
  expect(pause.title).toBe('Tool execution requires approval')
  expect(pause.interrupt.metadata?.arguments).toEqual({ version: 'v2.1', environment: 'staging' })
  // The middleware allows edit, so the form offers the arguments to change.
  const schema = pause.interrupt.responseSchema as { properties?: Record<string, unknown> }
  expect(Object.keys(schema.properties ?? {})).toEqual(['approved', 'reason', 'editedArgs'])
  return { d, ...pause }
}

describe.each([
  ['@ag-ui/langgraph, legacy', '/hitl/legacy'],
  ['@ag-ui/langgraph, outcome-only', '/hitl/outcome-only'],
  ['the CopilotKit runtime in front of @ag-ui/langgraph', '/agent/hitl/run'],
])('humanInTheLoopMiddleware through %s', (_name, path) => {
  it('approve: the tool runs with the arguments the model chose', async () => {
    const { d, interrupt, batchId } = await paused(path)
    const sent = await resumeWith(d, batchId, {
      interruptId: interrupt.id,
      status: 'resolved',
      payload: { approved: true },
    })
    expect(sent).toEqual([
      { interruptId: interrupt.id, status: 'resolved', payload: { decisions: [{ type: 'approve' }] } },
    ])
    expect(lastAssistantText(d)).toBe('Result: deployed v2.1 to staging')
    expect(lastGraphMessage(await threadValues(stack.urls, d.threadId))).toBe('Result: deployed v2.1 to staging')
  })

  it('edit: the tool runs with the edited arguments', async () => {
    const { d, interrupt, batchId } = await paused(path)
    const editedArgs = { version: 'v2.1', environment: 'canary' }
    const sent = await resumeWith(d, batchId, {
      interruptId: interrupt.id,
      status: 'resolved',
      payload: { approved: true, editedArgs },
    })
    expect(sent).toEqual([
      {
        interruptId: interrupt.id,
        status: 'resolved',
        payload: { decisions: [{ type: 'edit', editedAction: { name: 'deploy', args: editedArgs } }] },
      },
    ])
    expect(lastGraphMessage(await threadValues(stack.urls, d.threadId))).toBe('Result: deployed v2.1 to canary')
  })

  it('reject: the tool does not run and the model reads the reason', async () => {
    const { d, interrupt, batchId } = await paused(path)
    const payload = { approved: false, reason: 'freeze week' }
    await resumeWith(d, batchId, { interruptId: interrupt.id, status: 'resolved', payload })
    const values = await threadValues(stack.urls, d.threadId)
    const contents = (values.messages as { content?: unknown }[]).map((m) => m.content)
    expect(contents).not.toContain('deployed v2.1 to staging')
    expect(lastGraphMessage(values)).toBe('Result: freeze week')
  })
})

it('humanInTheLoopMiddleware: a cancel is sent as a rejection and the run ends normally', async () => {
  const { d, interrupt, batchId } = await paused('/hitl/legacy')
  const sent = await resumeWith(d, batchId, { interruptId: interrupt.id, status: 'cancelled' })
  expect(sent).toEqual([
    {
      interruptId: interrupt.id,
      status: 'resolved',
      payload: { decisions: [{ type: 'reject', message: 'Cancelled by the user.' }] },
    },
  ])
  expect(lastGraphMessage(await threadValues(stack.urls, d.threadId))).toBe('Result: Cancelled by the user.')
})
