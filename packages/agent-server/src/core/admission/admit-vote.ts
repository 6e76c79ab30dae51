import { checkResume, InterludeError, resumeCheckError } from '@interlude/protocol'
import type { DecisionRecord, DecisionVia, ResumeEntry, VoteTally } from '@interlude/protocol'
import type { BatchRecord, VoteWrite } from '../../store/store.ts'
import type { BatchTally } from '../access/vote-tally.ts'
import { pendingTallies, tallyBatch } from '../access/vote-tally.ts'
import { decisionHashSync } from '../decision-hash.ts'
import type { AdmissionDeps } from './admission.ts'

/**
 * A vote on a batch under an organisation policy (docs/approvals.md#organisation-policies), judged against the votes
 * so far (`tally`): what the voter may answer — every interrupt still open, once — and what the vote does. A vote
 * that settles the last open interrupt becomes the batch's claim, with the entries every interrupt was settled by; any
 * other is stored alone and answered with what is still missing. Both are written only while the batch holds exactly
 * the records judged here (`VoteWrite.expectedVotes`).
 */
export interface JudgedVote {
  /** What the claim carries out (settling) or the vote's own entries (not settling). */
  readonly entries: readonly ResumeEntry[]
  readonly write: VoteWrite
  /** What is still missing after this vote; empty when it settles the batch. */
  readonly pending: readonly VoteTally[]
  /** The voter's own entries, normalised (the expired flags of `checkResume` come with them). */
  readonly check: Extract<ReturnType<typeof checkResume>, { ok: true }>
}

/** `{ kind: 'voted' }`: a vote that settled nothing, stored (or the same vote again, by runId). */
export interface VotedAdmission {
  readonly kind: 'voted'
  readonly threadId: string
  readonly runId: string
  readonly pending: readonly VoteTally[]
}

/** The same voter, the same runId, the same entries: the stored vote answers again. */
export function replayedVote(
  tally: BatchTally,
  principal: string,
  request: { readonly threadId: string; readonly runId: string; readonly resume: readonly ResumeEntry[] },
): VotedAdmission | undefined {
  const mine = tally.records.find((r) => r.vote === true && r.decidedBy === principal && r.runId === request.runId)
  if (mine === undefined) return undefined
  // Entries for interrupts settled before the vote were not part of it (`judgeVote`).
  const voted = new Set(mine.entries.map((e) => e.interruptId))
  if (decisionHashSync(mine.entries) !== decisionHashSync(request.resume.filter((e) => voted.has(e.interruptId)))) {
    throw new InterludeError('ALREADY_VOTED', 'You already voted on this interrupt.', {
      details: { runId: mine.runId },
    })
  }
  return { kind: 'voted', threadId: request.threadId, runId: request.runId, pending: pendingTallies(tally) }
}

/** Every check of a vote; throws the refusal. */
export function judgeVote(
  deps: Pick<AdmissionDeps, 'now'>,
  batch: BatchRecord,
  tally: BatchTally,
  principal: string,
  entries: readonly ResumeEntry[],
  via: Exclude<DecisionVia, 'expiry'>,
): JudgedVote {
  const open = tally.interrupts.filter((i) => i.settled === undefined)
  const voted = open.find((i) => i.voters.has(principal))
  if (voted !== undefined) {
    throw new InterludeError('ALREADY_VOTED', 'You already voted on this interrupt.', {
      details: { interruptId: voted.interruptId },
    })
  }
  // A vote answers every interrupt still open, exactly as a decision answers every interrupt of its batch; an entry
  // for one settled meanwhile (another voter came first) is left out, not refused.
  const ids = new Set(open.map((i) => i.interruptId))
  const pending = batch.interrupts.filter((i) => ids.has(i.interrupt.id)).map((i) => i.interrupt)
  const settled = new Set(tally.interrupts.filter((i) => i.settled !== undefined).map((i) => i.interruptId))
  const own = entries.filter((e) => !settled.has(e.interruptId))
  const check = checkResume(pending, own, { now: deps.now(), expiry: 'refuse-resolved' })
  if (!check.ok) throw resumeCheckError(check)
  // One voter cannot change what the others approve: no edited arguments, no remembered rule, no grant in a vote (a
  // grant would outlive the vote on any interrupt of the batch, so none at all).
  for (const entry of check.entries) {
    const counts = tally.interrupts.find((i) => i.interruptId === entry.interruptId)?.policy.counts === true
    const payload = entry.status === 'resolved' ? (entry.payload as Record<string, unknown> | null) : null
    if (payload === null || typeof payload !== 'object') continue
    if ('grant' in payload || (counts && ('editedArgs' in payload || 'remember' in payload))) {
      throw new InterludeError('RESUME_PAYLOAD_INVALID', 'A vote cannot edit the arguments, remember or grant.', {
        details: { interruptId: entry.interruptId },
      })
    }
  }
  const stage = open[0]?.stage ?? 0
  const record: DecisionRecord = {
    threadId: batch.threadId,
    runId: '',
    interruptIds: [],
    entries: check.entries,
    decidedBy: principal,
    via,
    at: '',
    vote: true,
    stage,
  }
  const after = tallyBatch(
    batch.interrupts,
    (item) => tally.interrupts.find((i) => i.interruptId === item.interrupt.id)!.policy,
    [...tally.records, record],
  )
  const settles = after.interrupts.every((i) => i.settled !== undefined)
  const write: VoteWrite = { kind: 'vote', stage, expectedVotes: tally.records.length, settles }
  if (!settles) return { entries: check.entries, write, pending: pendingTallies(after), check }
  // The batch's decision: each interrupt as its deciding vote answered it, in batch order.
  const decided = after.interrupts.map((i) => i.settled!)
  return { entries: decided, write, pending: [], check }
}
