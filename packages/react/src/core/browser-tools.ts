import type { Message } from '@interlude/protocol'
import type { DriverHost } from './driver.ts'
import type { InteractionPlan } from './interaction-plan.ts'
import type { BrowserTool, PendingToolCall } from './types.ts'

/**
 * Which browser tools of a finished run execute here, and how (docs/react-runtime.md#browser-tools): only
 * genuinely new calls of a run this client started, each answered by a tool message.
 */

type Executable = BrowserTool & { readonly handler: NonNullable<BrowserTool['handler']> }

const executable = (tool: BrowserTool): tool is Executable => Boolean(tool.handler)

/** A call to execute, with the tool that has its handler. */
export interface ToolCallRef {
  readonly id: string
  readonly name: string
  readonly tool: BrowserTool
}

/** What the driver saw of one run's tool calls. */
export interface RunToolCalls {
  /** Calls started in this run: id → tool name. */
  readonly started: ReadonlyMap<string, string>
  /** Tool-call ids already in history when the run started (saved calls: never executed here). */
  readonly saved: ReadonlySet<string>
}

export function toolCallIdsOf(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>()
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.toolCalls)) for (const c of m.toolCalls) ids.add(c.id)
    else if (m.role === 'tool') ids.add(m.toolCallId)
  }
  return ids
}

/**
 * Only genuinely new calls of this run: started in this run, absent from the history captured when
 * the run started (a resumed run may re-announce saved calls), with a handler, not answered, and
 * pending per the server. `history` is the committed history after the run.
 */
export function eligibleCalls(
  tools: readonly BrowserTool[],
  history: readonly Message[],
  calls: RunToolCalls,
  pendingIds: readonly string[] | undefined,
): ToolCallRef[] {
  const handlers = new Map(tools.filter(executable).map((t) => [t.name, t] as const))
  const answered = new Set<string>()
  for (const m of history) if (m.role === 'tool') answered.add(m.toolCallId)
  const eligible: ToolCallRef[] = []
  for (const [id, name] of calls.started) {
    const tool = handlers.get(name)
    if (!tool || answered.has(id) || calls.saved.has(id)) continue
    if (pendingIds !== undefined && !pendingIds.includes(id)) continue
    eligible.push({ id, name, tool })
  }
  return eligible
}

/**
 * Unanswered calls of this client's browser tools in `history` (only those in `ids`, if given): what
 * the server still waits for but this client must not run on its own — saved calls a resumed run
 * lists (a response that held a browser call and an approval), calls of a run decided elsewhere, and
 * an idle thread's calls after a cold reload. They are offered to a person (`settleToolCalls`).
 */
export function offeredCalls(
  tools: readonly BrowserTool[],
  history: readonly Message[],
  ids?: readonly string[],
): PendingToolCall[] {
  const names = new Set(tools.map((t) => t.name))
  const answered = toolCallIdsOf(history.filter((m) => m.role === 'tool'))
  const offered: PendingToolCall[] = []
  for (const m of history)
    if (m.role === 'assistant')
      for (const c of m.toolCalls ?? [])
        if (names.has(c.function.name) && !answered.has(c.id) && (!ids || ids.includes(c.id)))
          offered.push(Object.freeze({ toolCallId: c.id, toolName: c.function.name, args: c.function.arguments }))
  return offered
}

function argumentsOf(messages: readonly Message[], toolCallId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role !== 'assistant' || !m.toolCalls) continue
    const call = m.toolCalls.find((c) => c.id === toolCallId)
    if (call) return call.function.arguments
  }
  return undefined
}

/** Runs one call (or, with `run` false, reports it unavailable); a failure (bad arguments, a throwing handler) becomes an error result, never a throw. */
export async function executeTool(
  host: DriverHost,
  plan: InteractionPlan,
  runId: string,
  call: ToolCallRef,
  run = true,
): Promise<Message> {
  const id = host.settings().generateId()
  const answer = (content: string): Message => ({ id, role: 'tool', toolCallId: call.id, content })
  // An error result: the model reads `{ error }`, the UI reads `error`.
  const failed = (error: string): Message => ({ ...answer(JSON.stringify({ error })), error }) as Message
  let args: unknown
  try {
    // The arguments arrived as deltas: commit them before reading.
    host.flush()
    const text = argumentsOf(host.read().messages, call.id)
    args = text === undefined || text === '' ? {} : JSON.parse(text)
  } catch {
    return failed('Invalid tool arguments (not JSON).')
  }
  const handler = call.tool.handler
  // Unavailable is uncertainty, not a fact: another tab may have run it before this one was asked (docs/client-contract.md).
  if (!run || !handler)
    return failed('The result is unavailable in this client; the operation may already have occurred.')
  try {
    const value = await handler(args, {
      toolCallId: call.id,
      threadId: plan.threadId,
      runId,
      signal: plan.signal,
    })
    return answer(typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? 'null'))
  } catch (error) {
    return failed(error instanceof Error ? error.message : String(error))
  }
}
