import type { Interrupt, Message, ResumeEntry, RunAgentInput } from '@interlude/protocol'
import type { ResolvedOptions } from './options.ts'
import type { CoreState } from './reducer.ts'
import type { PendingInterruptBatch, PendingToolCall } from './types.ts'

/** What a command asks the runtime to start: one union, so every kind carries exactly its own data. */
export type InteractionRequest =
  /** A user turn: the history to send (the new message or the reloaded turn included). */
  | { readonly kind: 'send'; readonly messages: readonly Message[] }
  /** The answers to the claimed batch (already checked, frozen). */
  | { readonly kind: 'resume'; readonly batch: PendingInterruptBatch; readonly entries: readonly ResumeEntry[] }
  /**
   * Join a run that is already running on the server (`recover()` of a running thread); `next`: whichever run starts
   * next after `from` (the head of the thread's queue), waiting for it.
   */
  | { readonly kind: 'attach'; readonly runId: string; readonly from?: string; readonly next?: boolean }
  /** Settle browser calls the server waits for (run them, or report them unavailable), then continue. */
  | { readonly kind: 'settle'; readonly calls: readonly PendingToolCall[]; readonly run: boolean }

/** Request-shaping configuration captured when the interaction starts (option changes later do not leak in). */
export interface InteractionConfig {
  readonly tools: RunAgentInput['tools']
  readonly context: RunAgentInput['context']
  readonly forwardedProps: Record<string, unknown>
}

export interface PlanBase {
  readonly gen: number
  readonly threadId: string
  readonly signal: AbortSignal
  readonly config: InteractionConfig
}

/** Everything the driver needs to run one interaction, decided at its start. */
export type InteractionPlan = PlanBase &
  (
    | { readonly kind: 'send'; readonly input: RunAgentInput }
    /** `interrupts`: the batch being answered (expiry is checked before every send of the resume). */
    | { readonly kind: 'resume'; readonly input: RunAgentInput; readonly interrupts: readonly Interrupt[] }
    /** `from`: replay cursor (events before the run's RUN_STARTED are skipped). */
    | { readonly kind: 'attach'; readonly runId: string; readonly from: string; readonly next: boolean }
    | { readonly kind: 'settle'; readonly calls: readonly PendingToolCall[]; readonly run: boolean }
  )

/** The request configuration of the current options (also what `getRecoveryConfiguration` reports). */
export function requestConfig(options: ResolvedOptions<unknown>): InteractionConfig {
  const tools = options.tools.map((t) => {
    const decl: { name: string; description: string; parameters?: unknown } = {
      name: t.name,
      description: t.description,
    }
    if (t.parameters !== undefined) decl.parameters = t.parameters
    return decl
  })
  return {
    tools: tools as InteractionConfig['tools'],
    context: [...options.context],
    forwardedProps: { ...options.forwardedProps },
  }
}

export function buildInput(
  threadId: string,
  runId: string,
  messages: readonly Message[],
  state: unknown,
  config: InteractionConfig,
  resume?: readonly ResumeEntry[],
): RunAgentInput {
  const input: RunAgentInput = {
    threadId,
    runId,
    protocolVersion: '1.0',
    // Always present: JSON drops `undefined`, and AG-UI servers may require the field.
    state: state === undefined ? {} : state,
    // Activity messages are UI-only (as in HttpAgent); the server owns the rest of history.
    messages: messages.filter((m) => (m.role as string) !== 'activity') as Message[],
    tools: config.tools,
    context: config.context,
    forwardedProps: config.forwardedProps,
  }
  // The entries are a frozen copy; the wire type is simply not readonly.
  if (resume !== undefined) input.resume = resume as ResumeEntry[]
  return input
}

/**
 * The plan of a request. Send and resume capture the checkpoint now: the history (the request's
 * for a send, the committed one for a resume) and the latest committed state.
 */
export function planInteraction(
  request: InteractionRequest,
  s: CoreState,
  base: PlanBase,
  runId: string,
): InteractionPlan {
  switch (request.kind) {
    case 'send':
      return { ...base, kind: 'send', input: buildInput(base.threadId, runId, request.messages, s.state, base.config) }
    case 'resume': {
      // Answers to foreign bridges' interrupts are shaped for their server by the driver (./foreign-support.ts).
      const input = buildInput(base.threadId, runId, s.messages, s.state, base.config, request.entries)
      return { ...base, kind: 'resume', input, interrupts: request.batch.interrupts }
    }
    case 'attach':
      return { ...base, kind: 'attach', runId, from: request.from ?? '0', next: request.next === true }
    case 'settle':
      return { ...base, ...request }
  }
}
