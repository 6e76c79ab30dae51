/**
 * The streams foreign AG-UI servers send for one pause and its resume, per server configuration,
 * as SSE text for the HTTP transport (see `replayFetch`). Each fixture is a function of the
 * request's `threadId` and `runId`, because the bridges echo them.
 *
 * The event sequences follow `@ag-ui/langgraph` 0.0.43 (`dispatchInterruptFinish`,
 * `interruptsToAGUI`, `handleStreamEvents`) and `@ag-ui/mastra` 1.1.2 (`onToolSuspended`,
 * `suspendToInterrupt`, `makeRunFinishedEvent`), written from their code with RAW events trimmed
 * and ids fixed; beside them, the same configurations captured from the running packages
 * (`captured`). The CopilotKit runtime stream is only written, not captured. What differs between
 * configurations is exactly what the client must handle: LangGraph ends with its own run id, the
 * legacy pause is `CUSTOM on_interrupt` + `RUN_FINISHED` without `outcome`.
 */

import recordedHitl from './recorded/langgraph-hitl-middleware.json' with { type: 'json' }
import recordedLangGraph from './recorded/langgraph-node-interrupt.json' with { type: 'json' }
import recordedMastra from './recorded/mastra-tool-suspend.json' with { type: 'json' }

type Event = Record<string, unknown>

/** LangGraph's own run id (the bridge sends it in `RUN_FINISHED`, not the request's). */
export const LANGGRAPH_RUN_ID = '1f0c7a52-lg-run'
export const LANGGRAPH_INTERRUPT_ID = 'b7e3f0a4c2d94f6e8a1b'

export interface RecordedServer {
  readonly name: string
  /** The events of the response to the message that pauses. */
  pause(threadId: string, runId: string): Event[]
  /** The events of the response to the resume. */
  resume(threadId: string, runId: string): Event[]
  /** The title `interruptTitle` shows for the pause. */
  readonly title: string
  /** The interrupt id the bridge expects back in `resume[]`. */
  interruptId(pauseRunId: string): string
  /** What the server receives for the form's `{ approved: true }`. */
  readonly approved: unknown
  /** The `resume[]` entry (without its id) the server receives for a cancel. */
  readonly cancelled: Record<string, unknown>
}

type LangGraphConfig = 'legacy' | 'outcome' | 'outcome-only'

/** The interrupt as `interruptsToAGUI` maps it. */
function langGraphOutcome(lg: { id: string; value: unknown }) {
  const value = lg.value as Record<string, unknown>
  return {
    id: lg.id,
    reason: 'langgraph:interrupt',
    metadata: { langgraph: { raw: value, ns: ['ask_approval:7c1e'], resumable: true, when: 'during' } },
  }
}

function langGraphServer(
  name: string,
  config: LangGraphConfig,
  value: unknown,
  title: string,
  answerText: string,
  answers: Pick<RecordedServer, 'approved' | 'cancelled'>,
): RecordedServer {
  const lg = { id: LANGGRAPH_INTERRUPT_ID, value, ns: ['ask_approval:7c1e'], resumable: true, when: 'during' }
  return {
    name,
    title,
    ...answers,
    interruptId: () => LANGGRAPH_INTERRUPT_ID,
    pause: (threadId, runId) => {
      const legacy = config === 'legacy' || config === 'outcome'
      const outcome = config === 'outcome' || config === 'outcome-only'
      return [
        { type: 'RUN_STARTED', threadId, runId },
        { type: 'STEP_STARTED', stepName: 'ask_approval' },
        { type: 'STATE_SNAPSHOT', snapshot: { messages: [] } },
        { type: 'RAW', event: { event: 'on_chain_start', metadata: { run_id: LANGGRAPH_RUN_ID } } },
        { type: 'STEP_FINISHED', stepName: 'ask_approval' },
        { type: 'STATE_SNAPSHOT', snapshot: { messages: [] } },
        { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'h-1', role: 'user', content: 'deploy v2.1' }] },
        ...(legacy
          ? [{ type: 'CUSTOM', name: 'on_interrupt', value: JSON.stringify(value), rawEvent: lg } satisfies Event]
          : []),
        {
          type: 'RUN_FINISHED',
          threadId,
          runId: LANGGRAPH_RUN_ID,
          ...(outcome ? { outcome: { type: 'interrupt', interrupts: [langGraphOutcome(lg)] } } : {}),
        },
      ]
    },
    resume: (threadId, runId) => [
      { type: 'RUN_STARTED', threadId, runId },
      { type: 'TEXT_MESSAGE_START', messageId: 'lg-ai-2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'lg-ai-2', delta: answerText },
      { type: 'TEXT_MESSAGE_END', messageId: 'lg-ai-2' },
      { type: 'RUN_FINISHED', threadId, runId: `${LANGGRAPH_RUN_ID}-2` },
    ],
  }
}

/** A node calling `interrupt({ question, environment })`, answered with `{ approved }`. */
const nodeInterrupt = { question: 'Deploy v2.1 to production?', environment: 'production' }

/** LangChain's `humanInTheLoopMiddleware` pausing a `deploy` tool call (an `HITLRequest`). */
export const hitlRequest = {
  actionRequests: [
    {
      name: 'deploy',
      args: { version: 'v2.1', environment: 'production' },
      description: 'Tool execution requires approval\n\nTool: deploy\nArgs: {"version":"v2.1"}',
    },
  ],
  reviewConfigs: [{ actionName: 'deploy', allowedDecisions: ['approve', 'edit', 'reject'] }],
}

/** A node's approval: the form's answer as it is; a cancel is a denial (docs/decisions.md#foreign-servers). */
const nodeAnswers = {
  approved: { approved: true },
  cancelled: { status: 'resolved', payload: { approved: false, reason: 'Cancelled by the user.' } },
}

/** The middleware takes decisions only; a cancel is a rejection. */
const hitlAnswers = {
  approved: { decisions: [{ type: 'approve' }] },
  cancelled: { status: 'resolved', payload: { decisions: [{ type: 'reject', message: 'Cancelled by the user.' }] } },
}

function mastraServer(name: string, emitInterruptOutcome: boolean): RecordedServer {
  const toolCallId = 'call_mastra_1'
  const suspend = (runId: string) => ({
    type: 'mastra_suspend',
    toolCallId,
    toolName: 'deploy',
    suspendPayload: { question: 'Deploy v2.1 to production?' },
    args: { version: 'v2.1' },
    resumeSchema: JSON.stringify({
      type: 'object',
      properties: { approved: { type: 'boolean' } },
      required: ['approved'],
    }),
    runId,
  })
  return {
    name,
    title: 'Deploy v2.1 to production?',
    approved: { approved: true },
    cancelled: { status: 'resolved', payload: { approved: false } },
    interruptId: (runId) => `${runId}::${toolCallId}`,
    pause: (threadId, runId) => {
      const s = suspend(runId)
      return [
        { type: 'RUN_STARTED', threadId, runId },
        { type: 'TOOL_CALL_START', toolCallId, toolCallName: 'deploy', parentMessageId: 'mastra-m1' },
        { type: 'TOOL_CALL_ARGS', toolCallId, delta: '{"version":"v2.1"}' },
        { type: 'TOOL_CALL_END', toolCallId },
        { type: 'CUSTOM', name: 'on_interrupt', value: JSON.stringify(s) },
        {
          type: 'RUN_FINISHED',
          threadId,
          runId,
          ...(emitInterruptOutcome
            ? {
                outcome: {
                  type: 'interrupt',
                  interrupts: [
                    {
                      id: `${runId}::${toolCallId}`,
                      reason: 'mastra:tool_suspend',
                      toolCallId,
                      responseSchema: JSON.parse(s.resumeSchema) as unknown,
                      metadata: { mastra: { ...s } },
                    },
                  ],
                },
              }
            : {}),
        },
      ]
    },
    resume: (threadId, runId) => [
      { type: 'RUN_STARTED', threadId, runId },
      { type: 'TOOL_CALL_RESULT', toolCallId, messageId: 'mastra-r1', role: 'tool', content: '{"deployed":true}' },
      { type: 'TEXT_MESSAGE_START', messageId: 'mastra-m2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'mastra-m2', delta: 'Deployed v2.1.' },
      { type: 'TEXT_MESSAGE_END', messageId: 'mastra-m2' },
      { type: 'RUN_FINISHED', threadId, runId },
    ],
  }
}

/**
 * Streams captured from the real packages (the JSON files in `recorded/` name the versions and the
 * set-up): the LangGraph API server (`startServer` of `@langchain/langgraph-api`, in-memory) running
 * a one-node graph that calls `interrupt({ question, environment })`, and `createAgent` with
 * `humanInTheLoopMiddleware` and a scripted chat model, each behind `LangGraphAgent` of
 * `@ag-ui/langgraph`; a Mastra `Agent` with a mock model and a tool that `suspend()`s, behind
 * `MastraAgent` of `@ag-ui/mastra`. Each was paused with `{ threadId, runId: "REQ_RUN_1" }` and
 * resumed with the standard `resume[]` (`REQ_RUN_2`); `$THREAD` and `REQ_RUN_n` are replaced by
 * the request's ids.
 */
interface Captured {
  readonly interruptId: string
  readonly pause: readonly unknown[]
  readonly resume: readonly unknown[]
}

function captured(
  name: string,
  stream: Captured,
  presented: Pick<RecordedServer, 'title' | 'approved' | 'cancelled'>,
): RecordedServer {
  const fill = (events: readonly unknown[], threadId: string, runId: string, placeholder: string): Event[] =>
    JSON.parse(JSON.stringify(events).replaceAll('$THREAD', threadId).replaceAll(placeholder, runId)) as Event[]
  return {
    name,
    ...presented,
    interruptId: (pauseRunId) => stream.interruptId.replaceAll('REQ_RUN_1', pauseRunId),
    pause: (threadId, runId) => fill(stream.pause, threadId, runId, 'REQ_RUN_1'),
    resume: (threadId, runId) => fill(stream.resume, threadId, runId, 'REQ_RUN_2'),
  }
}

export const RECORDED_SERVERS: readonly RecordedServer[] = [
  ...(['legacy', 'outcome', 'outcome-only'] as const).map((config) =>
    captured(`captured langgraph node interrupt() (${config})`, recordedLangGraph.configurations[config], {
      title: nodeInterrupt.question,
      ...nodeAnswers,
    }),
  ),
  captured('captured langgraph HITL middleware (legacy)', recordedHitl.configurations.legacy, {
    title: 'Tool execution requires approval',
    ...hitlAnswers,
  }),
  ...(['emitInterruptOutcome-false', 'emitInterruptOutcome-true'] as const).map((config) =>
    captured(`captured mastra suspend() (${config})`, recordedMastra.configurations[config], {
      title: 'Deploy v2.1 to production?',
      approved: { approved: true },
      cancelled: { status: 'resolved', payload: { approved: false } },
    }),
  ),
  langGraphServer(
    'langgraph (default, legacy on_interrupt)',
    'legacy',
    nodeInterrupt,
    nodeInterrupt.question,
    'Ok.',
    nodeAnswers,
  ),
  langGraphServer(
    'langgraph (emitInterruptOutcome: true)',
    'outcome',
    nodeInterrupt,
    nodeInterrupt.question,
    'Ok.',
    nodeAnswers,
  ),
  langGraphServer(
    'langgraph (enableLegacyOnInterruptEvent: false)',
    'outcome-only',
    nodeInterrupt,
    nodeInterrupt.question,
    'Ok.',
    nodeAnswers,
  ),
  langGraphServer(
    'langgraph HITL middleware (default, legacy on_interrupt)',
    'legacy',
    hitlRequest,
    'Tool execution requires approval',
    'Deployed.',
    hitlAnswers,
  ),
  // The CopilotKit runtime passes the bridge's events through: the same run id mismatch and legacy pause.
  langGraphServer(
    'copilotkit runtime → langgraph (default)',
    'legacy',
    nodeInterrupt,
    nodeInterrupt.question,
    'Ok.',
    nodeAnswers,
  ),
  mastraServer('mastra (emitInterruptOutcome: false)', false),
  mastraServer('mastra (default, emitInterruptOutcome: true)', true),
]

/** SSE text of a list of events, as `@ag-ui/encoder` writes it (no `id:` lines). */
export function sseOf(events: readonly Event[]): string {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')
}

/**
 * A `fetch` that answers each POST with the next recorded response (first the pause, then the
 * resume) and a bare 404 to anything else, like a foreign server without Interlude's routes.
 */
export function replayFetch(server: RecordedServer) {
  const bodies: Record<string, unknown>[] = []
  const fetchImpl: typeof fetch = async (_url, init) => {
    if (init?.method !== 'POST') return new Response('Not Found', { status: 404 })
    const body = JSON.parse(String(init.body)) as Record<string, unknown>
    bodies.push(body)
    const { threadId, runId } = body as { threadId: string; runId: string }
    const events = bodies.length === 1 ? server.pause(threadId, runId) : server.resume(threadId, runId)
    return new Response(sseOf(events), { status: 200, headers: { 'Content-Type': 'text/event-stream' } })
  }
  return { fetch: fetchImpl, bodies }
}
