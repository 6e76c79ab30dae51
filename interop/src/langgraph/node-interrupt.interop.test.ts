import { HttpAgent, type BaseEvent } from '@ag-ui/client'
import { afterEach, describe, expect, it } from 'vitest'
import { drive, lastAssistantText, pauseOn, resumeWith, type Drive } from '../support/drive.ts'
import { langGraphStack, lastGraphMessage, threadValues } from '../support/langgraph-stack.ts'
import { LANGGRAPH_CONFIGS, type LangGraphConfig } from './configs.ts'

/**
 * A LangGraph.js node calling `interrupt()`, served by the real LangGraph API server behind `@ag-ui/langgraph`, in
 * each of the bridge's interrupt configurations (docs/foreign-servers.md#langgraph), and through the CopilotKit runtime
 * (v2, `POST /agent/:agentId/run`) in front of the bridge's default configuration
 * (docs/foreign-servers.md#copilotkit-runtime).
 */
const stack = { urls: langGraphStack() }
const drives: Drive[] = []
afterEach(() => {
  for (const d of drives.splice(0)) d.rt.dispose()
})

function driving(path: string): Drive {
  const d = drive(`${path.startsWith('/agent/') ? stack.urls.copilotkit : stack.urls.agui}${path}`)
  drives.push(d)
  return d
}

const servers: [string, string][] = [
  ...(Object.keys(LANGGRAPH_CONFIGS) as LangGraphConfig[]).map((c): [string, string] => [
    `@ag-ui/langgraph, ${c}`,
    `/approval/${c}`,
  ]),
  ['the CopilotKit runtime in front of @ag-ui/langgraph', '/agent/approval/run'],
]

describe.each(servers)('LangGraph interrupt() through %s', (_name, path) => {
  it('pauses with the question as title, resumes with resume[] and the graph applies the approval', async () => {
    const d = driving(path)
    const { interrupt, title, batchId } = await pauseOn(d, 'deploy v2.1 to staging')
    expect(title).toBe('Deploy v2.1 to staging?')
    expect(interrupt.reason).toBe('langgraph:interrupt')
    expect(interrupt.metadata?.arguments).toEqual({ version: 'v2.1', environment: 'staging' })
    expect(await threadValues(stack.urls, d.threadId)).toMatchObject({ next: ['ask_approval'] })

    const sent = await resumeWith(d, batchId, {
      interruptId: interrupt.id,
      status: 'resolved',
      payload: { approved: true },
    })
    expect(sent).toEqual([{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }])
    expect(lastAssistantText(d)).toBe('Deployed v2.1 to staging.')
    const values = await threadValues(stack.urls, d.threadId)
    expect(values).toMatchObject({ approved: true, deployed: 'v2.1@staging', next: [] })
    expect(lastGraphMessage(values)).toBe('Deployed v2.1 to staging.')
  })

  it('a denial with a reason reaches the node, which does not deploy', async () => {
    const d = driving(path)
    const { interrupt, batchId } = await pauseOn(d, 'deploy v3.0')
    const payload = { approved: false, reason: 'freeze week' }
    await resumeWith(d, batchId, { interruptId: interrupt.id, status: 'resolved', payload })
    const values = await threadValues(stack.urls, d.threadId)
    expect(values).toMatchObject({ approved: false, next: [] })
    expect(values.deployed).toBeUndefined()
    expect(lastGraphMessage(values)).toBe('Not deployed (freeze week).')
  })
})

describe('LangGraph interrupt(): cancel and the reference client', () => {
  it('a cancel goes out as a denial the node understands', async () => {
    const d = driving('/approval/legacy')
    const { interrupt, batchId } = await pauseOn(d, 'deploy v2.2')
    const sent = await resumeWith(d, batchId, { interruptId: interrupt.id, status: 'cancelled' })
    expect(sent).toEqual([
      { interruptId: interrupt.id, status: 'resolved', payload: { approved: false, reason: 'Cancelled by the user.' } },
    ])
    expect(lastGraphMessage(await threadValues(stack.urls, d.threadId))).toBe('Not deployed (Cancelled by the user.).')
  })

  it('the reference HttpAgent completes the same pause and resume (side by side)', async () => {
    const threadId = crypto.randomUUID()
    const agent = new HttpAgent({
      url: `${stack.urls.agui}/approval/legacy`,
      threadId,
      initialMessages: [{ id: 'u1', role: 'user', content: 'deploy v2.1' }],
    })
    const events: BaseEvent[] = []
    await agent.runAgent({}, { onEvent: ({ event }) => void events.push(event) })
    const pause = events.find((e) => e.type === 'CUSTOM') as { rawEvent?: { id?: string } } | undefined
    const interruptId = pause?.rawEvent?.id
    expect(interruptId).toEqual(expect.any(String))
    // The run id mismatch Interlude accepts: HttpAgent finishes the stream without complaint.
    const finished = events.find((e) => e.type === 'RUN_FINISHED') as { runId?: string } | undefined
    expect(finished?.runId).not.toBe((events[0] as { runId?: string }).runId)

    await agent.runAgent({ resume: [{ interruptId: interruptId!, status: 'resolved', payload: { approved: true } }] })
    expect(await threadValues(stack.urls, threadId)).toMatchObject({ approved: true, deployed: 'v2.1@production' })
  })
})
