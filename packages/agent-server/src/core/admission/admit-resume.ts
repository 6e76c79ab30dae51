import { checkResume, InterludeError, resumeCheckError } from '@interlude/protocol'
import type { Context, DecisionRecord, DecisionVia, Interrupt, ResumeEntry, Tool } from '@interlude/protocol'
import type { SchemaIssue } from '../../schema/validator-cache.ts'
import type { NewOutboxDelivery } from '../../store/records.ts'
import type {
  BatchRecord,
  ClaimBatchRequest,
  ClaimBatchResult,
  RunRecord,
  Store,
  VoteWrite,
} from '../../store/store.ts'
import type { ThreadKey } from '../../store/thread-key.ts'
import type { Admission, AdmissionDeps } from './admission.ts'
import { isStoreUnavailable } from '../../store/store-errors.ts'
import { decisionHashSync } from '../decision-hash.ts'
import { decisionRecord } from '../decision-record.ts'
import { ev, toNewEvent } from '../ev.ts'
import { resumePlan } from '../run-plan.ts'
import type { JudgedVote, VotedAdmission } from './admit-vote.ts'
import { judgeVote, replayedVote } from './admit-vote.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { grantsOfDecision } from '../tools/grants.ts'

/** A decision for the open batch, from a resume run (`POST /runs`) or the decisions API. */
export interface ResumeRequest {
  readonly threadId: string
  readonly runId: string
  readonly resume: readonly ResumeEntry[]
  /** Browser tools and context of a resume run; the decisions API has none. */
  readonly tools?: readonly Tool[]
  readonly context?: readonly Context[]
  /** A signed decision link this decision spends (docs/approvals.md#deciding-outside-the-app): used once, ever. */
  readonly linkId?: string
}

const notFound = () => new InterludeError('THREAD_NOT_FOUND', 'Thread not found.')

/** The first batch of this thread that one of the entries names (any status). */
async function batchOfEntries(
  store: Store,
  threadId: string,
  ids: readonly string[],
): Promise<BatchRecord | undefined> {
  for (const id of new Set(ids)) {
    const batch = await store.getBatchOfInterrupt(threadId, id)
    if (batch) return batch
  }
  return undefined
}

/** What a decision is judged against: the thread's owner, the run already under this runId, the open batch. */
interface Grounds {
  readonly ownerId: string
  readonly run: RunRecord | undefined
  readonly open: BatchRecord | undefined
}

/** A decision that passed every check: the claim to make, and what starts once it is made. */
interface PreparedClaim {
  readonly kind: 'claim'
  readonly owner: string
  readonly batch: BatchRecord
  readonly request: ClaimBatchRequest
  readonly outbox: readonly NewOutboxDelivery[]
  readonly check: Extract<ReturnType<typeof checkResume>, { ok: true }>
  /** A vote under an organisation policy (docs/approvals.md#organisation-policies). */
  readonly vote?: JudgedVote
}

/** Votes judged again after another vote was written first, at most: each round, one vote of the race is written. */
const VOTE_ROUNDS = 64

/**
 * One attempt at admitting a decision (docs/protocol.md, admission step 6; docs/approvals.md): the same checks and
 * codes for every channel — decider rights, shape, idempotency by runId, an already decided batch, coverage,
 * expiry, Ajv — then the atomic claim, which records who decided and through which channel. `undefined`: the claim
 * lost a race that is worth evaluating again from the start.
 *
 * A batch this process wrote or read is judged from memory first (`open-batch-cache.ts`), so the claim is the only
 * statement. A refusal or a refused claim on that path (a stale entry, a lost race) is judged again from a fresh
 * read, so both paths give the same answers; an error of the store or the quota is answered as it is, once.
 */
export async function admitResume(
  deps: AdmissionDeps,
  principal: string,
  request: ResumeRequest,
  via: Exclude<DecisionVia, 'expiry'>,
): Promise<Admission | VotedAdmission | undefined> {
  const { openBatches } = deps
  const known = openBatches?.take(request.threadId)
  if (known !== undefined) {
    const grounds = { ownerId: known.ownerId, run: undefined, open: known.batch }
    const prepared = await prepareClaim(deps, principal, request, via, grounds).catch((error: unknown) => {
      if ((InterludeError.isInstance(error) && !isStoreUnavailable(error)) || error instanceof StaleTally)
        return undefined
      throw error
    })
    if (prepared?.kind === 'claim') {
      const claim = await makeClaim(deps, prepared)
      if (claim.ok) return started(deps, request, prepared, claim)
    }
  }
  // A vote that lost the race to another vote is judged again against the votes as they are now.
  for (let round = 0; round < VOTE_ROUNDS; round++) {
    const admitted = await admitFresh(deps, principal, request, via)
    if (admitted !== VOTES_CHANGED) return admitted
  }
  throw new InterludeError('THREAD_BUSY', 'The votes on this batch changed concurrently; retry.')
}

const VOTES_CHANGED = Symbol('votes-changed')

/**
 * The votes were read after the batch: they settle every interrupt of a batch read as open (another replica's vote
 * decided it in between). Judged again from a fresh read, which finds the batch decided.
 */
class StaleTally extends Error {}

/** Admission from a fresh read of the thread. */
async function admitFresh(
  deps: AdmissionDeps,
  principal: string,
  request: ResumeRequest,
  via: Exclude<DecisionVia, 'expiry'>,
): Promise<Admission | VotedAdmission | undefined | typeof VOTES_CHANGED> {
  const { store, openBatches } = deps
  const { threadId, runId } = request
  const view = await store.getAdmissionView(threadId, runId, { history: false })
  if (!view) throw notFound()
  const ownerId = view.thread.ownerId
  // Remembered only from a fresh read: a refusal below leaves the batch open, and the corrected retry needs no read.
  if (view.openBatch) openBatches?.remember(ownerId, view.openBatch)
  let prepared: Awaited<ReturnType<typeof prepareClaim>>
  try {
    prepared = await prepareClaim(deps, principal, request, via, { ownerId, run: view.run, open: view.openBatch })
  } catch (error) {
    if (error instanceof StaleTally) return VOTES_CHANGED
    throw error
  }
  if (prepared.kind !== 'claim') return prepared
  const claim = await makeClaim(deps, prepared)
  if (claim.ok) return started(deps, request, prepared, claim)
  if (claim.reason === 'votes_changed') return VOTES_CHANGED
  if (claim.reason !== 'busy') openBatches?.forget(threadId)
  switch (claim.reason) {
    case 'already_claimed':
      if (claim.decisionHash !== prepared.request.decisionHash) {
        throw new InterludeError('DECISION_CONFLICT', 'This batch was already decided differently.', {
          details: { runId: claim.claimedByRunId },
        })
      }
      if (claim.claimedByRunId === runId) return { kind: 'replay', threadId, runId }
      throw new InterludeError('ALREADY_RESUMED', 'This decision was already admitted under another runId.', {
        details: { runId: claim.claimedByRunId },
      })
    case 'busy':
      throw new InterludeError('THREAD_BUSY', 'Another run is active on this thread.')
    case 'link_used':
      throw new InterludeError('DECISION_CONFLICT', 'This decision link was already used.')
    default:
      return undefined
  }
}

/** Every check of a decision against its grounds; throws the refusal, or answers the claim to make. */
async function prepareClaim(
  deps: AdmissionDeps,
  principal: string,
  request: ResumeRequest,
  via: Exclude<DecisionVia, 'expiry'>,
  grounds: Grounds,
): Promise<PreparedClaim | Extract<Admission, { kind: 'replay' }> | VotedAdmission> {
  const { store, validators } = deps
  const { threadId, runId, resume: entries } = request
  const { open, ownerId: owner } = grounds
  const ids = entries.map((e) => e.interruptId)
  const targetsOpen = open !== undefined && ids.some((id) => open.interrupts.some((i) => i.interrupt.id === id))
  const targeted = targetsOpen ? open : await batchOfEntries(store, threadId, ids)
  // Rights come first and are judged on the batch the entries name (else the open one): a principal who may not
  // decide it learns nothing, not even that the thread exists.
  const governing = targeted ?? open
  // The votes so far, when the batch's policy counts them (docs/approvals.md#organisation-policies).
  const tally = governing ? await deps.rights.tally(governing) : undefined
  if (governing ? !(await deps.rights.mayDecide(principal, owner, governing, tally)) : principal !== owner)
    throw notFound()

  // Shape problems first (they do not depend on the batch), so the decision can be hashed.
  const shape = checkResume([], entries, { now: deps.now() })
  if (!shape.ok && shape.code === 'INVALID_INPUT') throw resumeCheckError(shape)
  const hash = decisionHashSync(entries)

  // A vote that settled nothing has a short run of its own under its runId: the same vote again answers as it did.
  const replayed =
    grounds.run && tally !== undefined && targetsOpen ? replayedVote(tally, principal, request) : undefined
  if (replayed !== undefined) return replayed
  if (grounds.run) {
    // The runId is the idempotency key: same decision → the first run's events again.
    if (grounds.run.kind === 'resume' && grounds.run.decisionHash === hash) return { kind: 'replay', threadId, runId }
    throw new InterludeError('DECISION_CONFLICT', 'This runId was already admitted with a different request.', {
      details: { runId },
    })
  }

  // Answers to a batch that was already decided: tell the client who won.
  if (!targetsOpen && targeted && targeted.status !== 'pending' && targeted.claimedByRunId !== undefined) {
    if (targeted.decisionHash === hash) {
      throw new InterludeError('ALREADY_RESUMED', 'This decision was already admitted under another runId.', {
        details: { runId: targeted.claimedByRunId },
      })
    }
    throw new InterludeError('DECISION_CONFLICT', 'This batch was already decided differently.', {
      details: { runId: targeted.claimedByRunId },
    })
  }

  let vote: JudgedVote | undefined
  if (tally !== undefined && targetsOpen) {
    const replayed = replayedVote(tally, principal, request)
    if (replayed !== undefined) return replayed
    if (tally.interrupts.every((i) => i.settled !== undefined)) throw new StaleTally()
    vote = judgeVote(deps, open, tally, principal, entries, via)
  }
  const check =
    vote?.check ??
    checkResume(open ? open.interrupts.map((i) => i.interrupt) : [], entries, {
      now: deps.now(),
      expiry: 'refuse-resolved',
    })
  if (!check.ok) throw resumeCheckError(check)
  const batch = open!
  // What the claim carries out: the entries, or — for a vote that settles the batch — every interrupt's deciding one.
  const decision = vote?.entries ?? check.entries

  const errors: Record<string, readonly SchemaIssue[]> = {}
  for (const entry of check.entries) {
    if (entry.status !== 'resolved') continue
    const schema = batch.interrupts.find((i) => i.interrupt.id === entry.interruptId)?.interrupt.responseSchema
    if (!schema) continue
    const result = validators.validate(schema, entry.payload)
    if (!result.ok) errors[entry.interruptId] = result.issues
  }
  if (Object.keys(errors).length > 0) {
    throw new InterludeError('RESUME_PAYLOAD_INVALID', 'A resume payload does not match its responseSchema.', {
      details: { errors },
    })
  }

  const now = deps.now()
  // docs/approvals.md#bounded-grants: checked before anything is written; they commit with the claim or not at all.
  // A vote carries no grant (admit-vote.ts): a vote's batch has none.
  const grants = grantsOfDecision({
    tools: deps.agent.tools,
    batch,
    entries: decision,
    owner,
    threadId: clientThreadId(threadId),
    decidedBy: principal,
    now,
    stored: store.grants !== undefined,
  })
  // The record the claim stores, as the webhook reports it (docs/approvals.md#decision-records).
  const record = {
    ...decisionRecord(batch, { runId, entries: decision, decidedBy: principal, via, now }),
    ...(vote ? { vote: true as const, stage: vote.write.stage } : {}),
  }
  const interrupts = batch.interrupts.map((i) => i.interrupt)
  // A vote that settles nothing decides nothing: `interrupt.decided` goes out with the vote that settles the batch.
  const outbox =
    vote?.write.settles === false
      ? []
      : (deps.webhooks?.decided({ threadId, owner, runId, interrupts }, record, now) ?? [])
  const claim: ClaimBatchRequest = {
    threadId,
    batchId: batch.batchId,
    runId,
    decisionHash: hash,
    decision,
    now,
    ...deps.lease(),
    decidedBy: principal,
    via,
    ...(outbox.length > 0 ? { outbox } : {}),
    ...(vote
      ? { vote: vote.write.settles ? vote.write : { ...vote.write, ...voteRun(threadId, runId, record, interrupts) } }
      : {}),
    ...(grants.length > 0 ? { grants } : {}),
    ...(request.linkId !== undefined ? { linkId: request.linkId } : {}),
  }
  return { kind: 'claim', owner, batch, request: claim, outbox, check, ...(vote ? { vote } : {}) }
}

/** The claim, inside the owner's quota (the in-flight slot is released once the write is done). */
async function makeClaim(deps: AdmissionDeps, prepared: PreparedClaim): Promise<ClaimBatchResult> {
  const { request } = prepared
  const release = await deps.quota?.beforeStart(prepared.owner, { threadId: request.threadId, newThread: false })
  return deps.store.claimBatch(request).finally(release)
}

function started(
  deps: AdmissionDeps,
  request: ResumeRequest,
  prepared: PreparedClaim,
  claim: Extract<ClaimBatchResult, { ok: true }>,
): Admission | VotedAdmission {
  const { owner, batch, check, vote } = prepared
  const { threadId, runId } = request
  // A vote that settles nothing starts nothing: the batch stays open for the votes still missing. Its short run in the
  // log reaches this process's followers now (other replicas through the store's change feed).
  if (vote !== undefined && !vote.write.settles) {
    if (claim.events !== undefined) deps.publish?.(threadId, claim.events)
    return { kind: 'voted', threadId, runId, pending: vote.pending }
  }
  // A decider's resume run contributes its decisions only: its context and browser tools would act in the owner's
  // turn (docs/approvals.md#who-may-decide). The owner's own resume keeps them.
  const own = prepared.request.decidedBy === owner
  const tools = own ? request.tools : undefined
  const context = own ? request.context : undefined
  deps.openBatches?.forget(threadId)
  deps.webhooks?.committed(prepared.outbox)
  const { expired } = check
  const admitted = prepared.request.decision
  const allCancelled = admitted.every((e) => e.status === 'cancelled')
  return {
    kind: 'start',
    plan: resumePlan({ threadId, runId, owner, batch, entries: admitted, allCancelled, expired, tools, context }),
  }
}

/**
 * The short run a vote that settles nothing writes to the paused thread's log (docs/approvals.md#organisation-policies):
 * `RUN_STARTED`, the vote's record (`CUSTOM interlude.decision`), `RUN_FINISHED` with the batch's interrupts — still
 * open — so a follower (the owner's open chat) shows the vote the moment it is cast, in valid AG-UI run framing.
 */
function voteRun(
  threadId: ThreadKey,
  runId: string,
  record: DecisionRecord,
  interrupts: Interrupt[],
): Pick<VoteWrite, 'events' | 'outcomeJson'> {
  const outcome = { type: 'interrupt' as const, interrupts }
  const events = [ev.runStarted(threadId, runId), ev.decision(record), ev.runFinished(threadId, runId, outcome)]
  return { events: events.map(toNewEvent), outcomeJson: JSON.stringify(outcome) }
}
