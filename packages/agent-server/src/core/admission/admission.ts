import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type { DecisionVia, ExternalResultsSettled, Message, RunAgentInput, ToolMessage } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { Clock } from '../../clock.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { Store, StoredEvent, ThreadRecord } from '../../store/store.ts'
import type { WebhookOutbox } from '../../webhooks/webhook-outbox.ts'
import type { ResumeRequest } from './admit-resume.ts'
import { admitResume } from './admit-resume.ts'
import type { VotedAdmission } from './admit-vote.ts'
import type { DecisionRights } from '../access/decision-rights.ts'
import { expiredBatchBusy } from '../expiry/expiry-first-touch.ts'
import type { ExpireBatch } from '../expiry/expiry-first-touch.ts'
import type { Limits } from '../../config/limits.ts'
import type { OpenBatchCache } from '../open-batch-cache.ts'
import type { RunPlan } from '../run-plan.ts'
import { threadTitle } from './thread-title.ts'
import { callsAnswered, checkResultPoster, settledAnswer } from './external-results.ts'
import { checkBrowserClaims, claimIdOf, closingResult } from './browser-claims.ts'
import type { AdmitOptions, QueuedAdmission, SteeredAdmission } from './enqueue-input.ts'
import { enqueueInput, queueAhead, takenSteer } from './enqueue-input.ts'

export type { ResumeRequest } from './admit-resume.ts'

export interface AdmissionDeps {
  readonly store: Store
  readonly agent: ResolvedAgent
  readonly validators: ValidatorCache
  readonly now: Clock
  /** The count and size of new messages are checked here, where the thread's history is known. */
  readonly limits: Pick<Limits, 'maxMessagesPerInput' | 'maxMessageBytes' | 'threadMaxMessages' | 'threadMaxBytes'>
  /** Executor + lease of a run admitted by this process. */
  readonly lease: () => { readonly executorId: string; readonly leaseUntil: number }
  /**
   * First touch (`RunRecovery.touch`): closes the thread's active run if it executes nowhere any
   * more (its lease ended); answers the thread as it is afterwards (the same object if untouched).
   */
  readonly recoverThread: (thread: ThreadRecord) => Promise<ThreadRecord>
  /** Who may decide a batch (docs/approvals.md): resumes are admitted only for deciders. */
  readonly rights: DecisionRights
  /** `interrupt.decided` rows written with the claim (docs/approvals.md, "Webhooks"). */
  readonly webhooks?: WebhookOutbox
  /** First touch of a batch past its deadline (`ExpirySweeper.expire`); without it new input waits for the sweep. */
  readonly expireBatch?: ExpireBatch
  /**
   * Per-principal quotas checked right before an admission write, never for a retry that joins an admitted run
   * (`Quotas.beforeStart`: concurrent runs of the thread's owner, new threads per minute). Throws `RATE_LIMITED`;
   * the answer releases the in-flight slot once the write is done.
   */
  readonly quota?: AdmissionQuota
  /** Open batches this process wrote or read: a resume for one of them is admitted in one statement. */
  readonly openBatches?: OpenBatchCache
  /** Hands events an admission appended to the log (a vote's short run) to this process's followers. */
  readonly publish?: (threadId: string, events: readonly StoredEvent[]) => void
}

export interface AdmissionQuota {
  beforeStart(owner: string, options: { readonly threadId: string; readonly newThread: boolean }): Promise<() => void>
}

/**
 * Admission answers with a run to start, with an already admitted run whose events to send, or — for results whose
 * external calls are all settled already — with what those calls hold (docs/protocol.md#external-results).
 */
export type Admission =
  | { readonly kind: 'start'; readonly plan: RunPlan }
  | { readonly kind: 'replay'; readonly threadId: string; readonly runId: string }
  | { readonly kind: 'settled'; readonly answer: ExternalResultsSettled }
  | QueuedAdmission
  | SteeredAdmission
  | VotedAdmission

const RETRY = Symbol('retry')
const MAX_ATTEMPTS = 4

// Another principal's thread is indistinguishable from a missing one.
const notFound = () => new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')

function textContent(message: ToolMessage): string {
  const content = message.content as unknown
  if (typeof content === 'string') return content
  return JSON.stringify(content)
}

/**
 * The message limits apply to what is new: a client that re-sends the whole history every run
 * (HttpAgent) is not penalised for the length of the thread. Checked before the thread's state,
 * so an oversized input is refused as such whatever the thread is doing.
 */
function checkNewMessages(
  messages: readonly Message[],
  known: ReadonlySet<string>,
  limits: AdmissionDeps['limits'],
): void {
  const { maxMessagesPerInput, maxMessageBytes } = limits
  const unseen = new Set<string>()
  for (const message of messages) {
    if (known.has(message.id) || unseen.has(message.id)) continue
    unseen.add(message.id)
    if (unseen.size > maxMessagesPerInput) {
      const actual = new Set(messages.map((m) => m.id).filter((id) => !known.has(id))).size
      throw new InterludeError(
        'PAYLOAD_TOO_LARGE',
        `At most ${maxMessagesPerInput} new messages are accepted per input.`,
        {
          details: { limit: 'maxMessagesPerInput', max: maxMessagesPerInput, actual },
        },
      )
    }
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8')
    if (bytes > maxMessageBytes) {
      throw new InterludeError('PAYLOAD_TOO_LARGE', `A new message is larger than ${maxMessageBytes} bytes.`, {
        details: { limit: 'maxMessageBytes', max: maxMessageBytes, actual: bytes, messageId: message.id },
      })
    }
  }
}

/**
 * The thread cap (docs/decisions.md#bounded-histories, docs/protocol.md#limits): checked against the running totals on the thread row, so it
 * costs nothing however long the thread is. The revision check of `startInputRun` keeps it exact under races.
 */
function checkThreadCap(
  thread: ThreadRecord | undefined,
  added: readonly Message[],
  limits: Pick<Limits, 'threadMaxMessages' | 'threadMaxBytes'>,
): void {
  if (added.length === 0) return
  const messages = (thread?.messageCount ?? 0) + added.length
  let bytes = thread?.messageBytes ?? 0
  for (const m of added) bytes += Buffer.byteLength(JSON.stringify(m), 'utf8')
  if (messages > limits.threadMaxMessages || bytes > limits.threadMaxBytes) {
    throw new InterludeError('THREAD_TOO_LARGE', 'The thread is full; start a new thread.', {
      details: {
        maxMessages: limits.threadMaxMessages,
        maxBytes: limits.threadMaxBytes,
        messages: thread?.messageCount ?? 0,
        bytes: thread?.messageBytes ?? 0,
      },
    })
  }
}

/**
 * Everything decidable without running is decided here, before any stream byte (docs/protocol.md), and a
 * refusal changes nothing: the only writes are the two atomic admission transactions of the store.
 * A thread held by a run whose process died is released on first touch and admission is tried again.
 * New input is the owner's alone, but for the results of external calls whose tool names the caller in `resultFrom`
 * (`owner`: whose thread `input.threadId` is); a resume goes through `admitDecision`'s path with `via: 'run'`.
 */
export async function admitRun(
  deps: AdmissionDeps,
  principal: string,
  input: RunAgentInput,
  owner: string = principal,
  options: AdmitOptions = {},
): Promise<Admission> {
  const { resume } = input
  if (resume === undefined) {
    return withFirstTouch(
      deps,
      input.threadId,
      async (thread) => thread.ownerId === principal,
      () => attempts(() => admitInput(deps, principal, input, owner, options)),
    )
  }
  return admitDecision(deps, principal, { ...input, resume }, 'run')
}

/**
 * Admits a decision for the thread's open batch (docs/approvals.md): the one admission path of every resume,
 * whichever channel brought it — `run` (a resume run) or `api` (the decisions route). Only a principal who may decide
 * the batch gets past the first check; everybody else gets `THREAD_NOT_FOUND` and nothing changes.
 */
export async function admitDecision(
  deps: AdmissionDeps,
  principal: string,
  request: ResumeRequest,
  via: Exclude<DecisionVia, 'expiry'>,
): Promise<Admission> {
  return withFirstTouch(
    deps,
    request.threadId,
    // THREAD_BUSY comes only after the rights check passed; a reader may not touch a thread it cannot read.
    (thread) => deps.rights.mayRead(principal, thread),
    () => attempts(async () => (await admitResume(deps, principal, request, via)) ?? RETRY),
  )
}

/** On THREAD_BUSY, closes a run whose process died (if the caller may touch the thread), then admits once more. */
async function withFirstTouch(
  deps: AdmissionDeps,
  threadId: string,
  mayTouch: (thread: ThreadRecord) => Promise<boolean>,
  admit: () => Promise<Admission>,
): Promise<Admission> {
  try {
    return await admit()
  } catch (error) {
    if (!(InterludeError.isInstance(error) && error.code === 'THREAD_BUSY')) throw error
    const thread = await deps.store.getThread(threadId)
    if (!thread || !(await mayTouch(thread)) || (await deps.recoverThread(thread)) === thread) throw error
    return admit()
  }
}

/** One admission. Lost races (revision changed between read and write) are re-evaluated from scratch. */
async function attempts(once: () => Promise<Admission | typeof RETRY>): Promise<Admission> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const result = await once()
    if (result !== RETRY) return result
  }
  throw new InterludeError('THREAD_BUSY', 'The thread changed concurrently; retry.')
}

async function admitInput(
  deps: AdmissionDeps,
  principal: string,
  input: RunAgentInput,
  owner: string,
  options: AdmitOptions,
): Promise<Admission | typeof RETRY> {
  const { store } = deps
  const { threadId, runId } = input
  // Only the ids this input names are looked up: admission never reads a whole history (docs/decisions.md#bounded-histories).
  const view = await store.getAdmissionView(threadId, runId, {
    history: true,
    messageIds: input.messages.map((m) => m.id),
    toolCallIds: input.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])),
  })
  if (view === undefined ? owner !== principal : view.thread.ownerId !== owner) throw notFound()
  const thread = view?.thread

  const known: ReadonlySet<string> = view?.knownMessageIds ?? new Set()
  // Results from the owning system (docs/protocol.md#external-results): checked before the thread's state, so a late
  // duplicate gets the first result back even while the run the first one started is still going.
  const poster = owner !== principal
  const results = poster ? input.messages : input.messages.filter((m) => m.role === 'tool' && !known.has(m.id))
  if (view && (poster || results.length > 0)) {
    const calls = await callsAnswered(store, threadId, results)
    if (poster) checkResultPoster(principal, input.messages, calls, deps.agent.tools)
    const onlyResults = input.messages.every((m) => m.role === 'tool' || known.has(m.id))
    const settled = onlyResults ? settledAnswer(threadId, results, calls) : undefined
    if (settled) return { kind: 'settled', answer: settled }
  }
  checkNewMessages(input.messages, known, deps.limits)
  if (view) {
    if (view.run) {
      // A retry of the same input run (before its acknowledgement) joins the first attempt.
      if (view.run.kind === 'input') return { kind: 'replay', threadId, runId }
      throw new InterludeError('DECISION_CONFLICT', 'This runId was already used for a resume on this thread.', {
        details: { runId },
      })
    }
    // A steer's retry after a run took it answers that run again (docs/protocol.md#multitask).
    const taken = options.multitask === 'steer' ? await takenSteer(deps, input, view) : undefined
    if (taken) return taken
    // Busy, or idle with input queued ahead: `enqueue` and `interrupt` queue it (docs/protocol.md#multitask).
    const busy = view.openBatch !== undefined || view.thread.activeRunId !== undefined
    const ahead = busy || options.fromQueue ? 0 : ((await store.listQueuedInputs?.(threadId))?.length ?? 0)
    if (busy || ahead > 0) {
      const queued = await enqueueInput(deps, owner, input, view, options.multitask ?? 'reject')
      if (queued) return queued
      if (ahead > 0) throw queueAhead(threadId, ahead)
    }
    if (view.openBatch) {
      const expiring = await expiredBatchBusy(view.openBatch, deps.now(), deps.expireBatch)
      if (expiring) throw expiring
      throw new InterludeError(
        'INTERRUPTS_PENDING',
        'The thread has pending interrupts; answer them with resume first.',
        {
          details: { interrupts: view.openBatch.interrupts.map((i) => i.interrupt) },
        },
      )
    }
    if (view.thread.activeRunId !== undefined) {
      throw new InterludeError('THREAD_BUSY', 'Another run is active on this thread.', {
        details: { activeRunId: view.thread.activeRunId },
      })
    }
  }

  // History is server-owned: only unseen ids are considered, and only user messages and results
  // for pending browser/external calls are accepted. Client assistant/tool messages never approve
  // or execute anything.
  const allCallIds: ReadonlySet<string> = view?.knownToolCallIds ?? new Set()
  const awaiting = view?.awaitingResults ?? []
  const awaitingIds = new Set(awaiting.map((c) => c.toolCallId))
  const seen = new Set<string>()
  const answered = new Set<string>()
  const toolMessages: Message[] = []
  const userMessages: Message[] = []
  const toolResults: { toolCallId: string; status: 'succeeded' | 'cancelled' | 'unknown'; result: string }[] = []
  const settledElsewhere: string[] = []
  for (const message of input.messages) {
    if (seen.has(message.id))
      throw new InterludeError('INVALID_INPUT', 'Message ids must be unique.', { details: { messageId: message.id } })
    seen.add(message.id)
    if (known.has(message.id)) continue
    if (message.role === 'user') {
      userMessages.push(message)
    } else if (message.role === 'tool') {
      if (awaitingIds.has(message.toolCallId)) {
        if (answered.has(message.toolCallId)) continue
        answered.add(message.toolCallId)
        toolMessages.push(message)
        toolResults.push({ toolCallId: message.toolCallId, status: 'succeeded', result: textContent(message) })
      } else if (!allCallIds.has(message.toolCallId)) {
        throw new InterludeError('UNKNOWN_TOOL_CALL', 'A tool message answers a tool call this thread does not have.', {
          details: { toolCallId: message.toolCallId },
        })
      }
      // A browser call settled already (another of the owner's clients sent its result first, or the
      // next message cancelled it): this result set is refused, so exactly one client's counts.
      else if ((await store.getToolCall(threadId, message.toolCallId))?.kind === 'client')
        settledElsewhere.push(message.toolCallId)
      // A known server-side or awaiting-decision call: ignored.
    }
  }
  checkBrowserClaims(
    awaiting.filter((c) => answered.has(c.toolCallId)),
    claimIdOf(input.forwardedProps),
  )
  if (settledElsewhere.length > 0)
    throw new InterludeError('TOOL_RESULTS_ALREADY_SUBMITTED', 'These browser tool calls already have a result.', {
      details: { toolCallIds: settledElsewhere },
    })
  // A new user message closes calls still waiting for a result, so the history stays answerable; one that may have
  // happened (dispatched, or claimed by a tab) is left `unknown`, never "cancelled" (./browser-claims.ts).
  // Free calls the response held while those waited never started: they are closed as not run, in the same write.
  if (userMessages.length > 0) {
    for (const call of [...awaiting, ...(view?.heldCalls ?? [])]) {
      if (answered.has(call.toolCallId)) continue
      const { status, result } = closingResult(call)
      toolMessages.push({ id: `msg_${randomUUID()}`, role: 'tool', toolCallId: call.toolCallId, content: result })
      toolResults.push({ toolCallId: call.toolCallId, status, result })
    }
  }

  const added = [...toolMessages, ...userMessages]
  checkThreadCap(thread, added, deps.limits)
  // Stored once, from the first user message (the thread's or a later input's when the thread had none).
  const title = thread?.title === undefined ? threadTitle(userMessages) : undefined
  // A queued input was counted by the quota when it was queued.
  const release = options.fromQueue
    ? undefined
    : await deps.quota?.beforeStart(owner, { threadId, newThread: thread === undefined })
  const started = await store
    .startInputRun({
      threadId,
      ownerId: owner,
      runId,
      parentRunId: input.parentRunId,
      expectedRevision: thread ? thread.revision : null,
      initialState: deps.agent.initialState(),
      messages: added,
      toolResults,
      now: deps.now(),
      ...deps.lease(),
      ...(title !== undefined ? { title } : {}),
    })
    .finally(release)
  if (!started.ok) {
    if (started.reason === 'busy') throw new InterludeError('THREAD_BUSY', 'Another run is active on this thread.')
    return RETRY
  }
  return {
    kind: 'start',
    // The continuation is the owner's turn, whoever posted the result that started it.
    plan: {
      kind: 'input',
      threadId,
      runId,
      principal: owner,
      clientTools: input.tools ?? [],
      context: input.context ?? [],
    },
  }
}
