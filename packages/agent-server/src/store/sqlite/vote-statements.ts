import type { DecisionVia } from '@interlude/protocol'
import { OPEN_BATCH_STATUS } from '../statuses.ts'
import { sqlString } from '../sql-literals.ts'
import type { Prepare } from './prepared.ts'

const OPEN_BATCH = sqlString(OPEN_BATCH_STATUS)

export interface VoteParams {
  threadId: string
  batchId: string
  expectedVotes: number
}

/** The statements of votes (docs/approvals.md#organisation-policies), part of `prepareStatements`. */
export function voteStatements(prepare: Prepare) {
  return {
    /** One more vote, only while the open batch holds exactly the votes the voter was judged against. */
    countVote: prepare<VoteParams>(
      `UPDATE interrupt_batches SET vote_count = vote_count + 1
       WHERE batch_id = @batchId AND thread_id = @threadId AND status = ${OPEN_BATCH} AND vote_count = @expectedVotes`,
    ),
    /** The batch's vote count as it is (why a vote was refused). */
    voteCount: prepare<[string, string], { vote_count: number }>(
      'SELECT vote_count FROM interrupt_batches WHERE batch_id = ? AND thread_id = ?',
    ),
    /** The short run of a vote that settles nothing (`VoteWrite.events`): paused, as the batch still is. */
    insertVoteRun: prepare<{ threadId: string; runId: string; outcomeJson: string; now: number }>(
      `INSERT OR IGNORE INTO runs (thread_id, run_id, kind, status, outcome_json, created_at, finished_at)
       VALUES (@threadId, @runId, 'resume', 'interrupted', @outcomeJson, @now, @now)`,
    ),
    /** Its events' seqs: the log of a paused thread (no active run) advances by `count`. */
    advanceIdleSeq: prepare<{ threadId: string; count: number }, { last_seq: number }>(
      'UPDATE threads SET last_seq = last_seq + @count WHERE thread_id = @threadId AND active_run_id IS NULL RETURNING last_seq',
    ),
    /** A vote's (or an escalation's) record; nothing when the run id is taken. */
    insertVoteDecision: prepare<{
      threadId: string
      runId: string
      batchId: string
      entries: string
      decidedBy: string
      via: DecisionVia
      now: number
      voteKind: 'vote' | 'escalation' | 'reminder'
      voteStage: number
    }>(
      `INSERT OR IGNORE INTO decisions
         (thread_id, run_id, batch_id, interrupt_ids, entries, decided_by, via, decided_at, vote_kind, vote_stage)
       VALUES (@threadId, @runId, @batchId,
         (SELECT json_group_array(interrupt_id ORDER BY position) FROM interrupts WHERE batch_id = @batchId),
         @entries, @decidedBy, @via, @now, @voteKind, @voteStage)`,
    ),
    /** Marks the record a settling vote's claim wrote. */
    markVoteDecision: prepare<{
      threadId: string
      runId: string
      voteKind: 'vote' | 'escalation' | 'reminder'
      voteStage: number
    }>(
      'UPDATE decisions SET vote_kind = @voteKind, vote_stage = @voteStage WHERE thread_id = @threadId AND run_id = @runId',
    ),
  }
}
