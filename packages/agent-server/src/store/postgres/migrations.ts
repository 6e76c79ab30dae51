import type { DialectMigrations } from '../migration-steps.ts'
import { migrationSteps } from '../migration-steps.ts'

/**
 * The PostgreSQL schema's migrations, keyed by the shared ids (`../migration-ids.ts`): each is the same change as
 * SQLite's migration of that id. Applied in order, each step recorded in `schema_migrations` (`../migration-steps.ts`:
 * `0002-run-leases` has no SQL here, so version k ≥ 2 is the first k + 1 ids). Never edit a shipped migration: append
 * a new id. The tables mirror the SQLite store (same column names); times are epoch milliseconds (BIGINT), JSON is
 * stored as TEXT so replayed frames stay byte-identical.
 */
export const POSTGRES_MIGRATIONS: DialectMigrations = {
  // The complete first schema of the PostgreSQL store (docs/architecture.md#the-store-and-its-records): threads,
  // messages, runs with leases and cancel flag (SQLite's `0002-run-leases` too), the per-thread event log, interrupt
  // batches, the tool-call/effects ledger, settings.
  '0001-initial': `
  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE TABLE threads (
    thread_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'interrupted')),
    state_json TEXT NOT NULL,
    active_run_id TEXT,
    last_seq INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX threads_by_owner ON threads (owner_id, updated_at DESC, thread_id);
  CREATE TABLE messages (
    thread_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    role TEXT NOT NULL,
    run_id TEXT,
    json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, position),
    UNIQUE (thread_id, message_id)
  );
  CREATE TABLE runs (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('input', 'resume')),
    status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'interrupted', 'failed', 'cancelled')),
    parent_run_id TEXT,
    batch_id TEXT,
    decision_hash TEXT,
    outcome_json TEXT,
    error_code TEXT,
    created_at BIGINT NOT NULL,
    finished_at BIGINT,
    executor_id TEXT,
    lease_until BIGINT,
    cancel_requested_at BIGINT,
    PRIMARY KEY (thread_id, run_id)
  );
  CREATE INDEX runs_running ON runs (lease_until) WHERE status = 'running';
  CREATE INDEX runs_by_executor ON runs (executor_id) WHERE status = 'running';
  CREATE TABLE events (
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    type TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
  );
  CREATE INDEX events_by_run ON events (thread_id, run_id, seq);
  CREATE TABLE interrupt_batches (
    batch_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'resolved', 'cancelled', 'expired')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decision_hash TEXT,
    decision_json TEXT,
    claimed_by_run_id TEXT,
    claimed_at BIGINT,
    closed_at BIGINT
  );
  -- At most one open batch per thread, enforced by the database.
  CREATE UNIQUE INDEX one_pending_batch_per_thread ON interrupt_batches (thread_id) WHERE status = 'pending';
  CREATE TABLE interrupts (
    interrupt_id TEXT PRIMARY KEY,
    batch_id TEXT NOT NULL REFERENCES interrupt_batches (batch_id),
    thread_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    json TEXT NOT NULL
  );
  CREATE INDEX interrupts_by_batch ON interrupts (batch_id, position);
  CREATE TABLE tool_calls (
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    ordinal BIGSERIAL,
    run_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    args_text TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    attempt_run_id TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    PRIMARY KEY (thread_id, tool_call_id)
  );
  CREATE INDEX tool_calls_open ON tool_calls (thread_id, status);
  `,
  // No SQL of its own: `0001-initial` above already has the leases and the cancel flag (this store shipped after
  // them). The shared ids line up with SQLite's that way; the step numbering keeps this database's recorded
  // versions (`../migration-steps.ts`: version 1 is `0001-initial` with this id).
  '0002-run-leases': { madeBy: '0001-initial' },
  // Approvals from anywhere (docs/approvals.md). The thread's title, stored once at creation; each batch's expiry
  // policy (a batch from before this migration keeps today's behaviour, 'keep': nothing is decided automatically that
  // nobody configured; the default is for those rows only, a new batch always names its policy); the deadline index of
  // the expiry sweep and the age index of the cross-owner inbox, both over open batches only; decision records, written
  // by the claim and never rewritten; the webhook outbox, written with the change it reports. `ordinal` keeps insertion
  // order among rows of one millisecond (SQLite uses its rowid).
  '0003-approvals-from-anywhere': `
  ALTER TABLE threads ADD COLUMN title TEXT;
  ALTER TABLE interrupt_batches ADD COLUMN on_expiry TEXT NOT NULL DEFAULT 'keep'
    CHECK (on_expiry IN ('deny', 'cancel', 'keep'));
  ALTER TABLE interrupt_batches ALTER COLUMN on_expiry DROP DEFAULT;
  CREATE INDEX pending_batches_by_deadline ON interrupt_batches (expires_at) WHERE status = 'pending';
  CREATE INDEX pending_batches_by_age ON interrupt_batches (created_at, batch_id) WHERE status = 'pending';
  CREATE TABLE decisions (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    ordinal BIGSERIAL,
    batch_id TEXT NOT NULL,
    interrupt_ids TEXT NOT NULL,
    entries TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    via TEXT NOT NULL CHECK (via IN ('run', 'api', 'expiry')),
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, run_id)
  );
  CREATE TABLE webhook_outbox (
    delivery_id TEXT PRIMARY KEY,
    ordinal BIGSERIAL,
    endpoint TEXT NOT NULL,
    event_type TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    last_error TEXT,
    locked_by TEXT,
    locked_until BIGINT
  );
  CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_attempt_at);
  `,
  // Bounded threads (docs/decisions.md#bounded-histories): running totals of each thread's messages, kept by every
  // append, so the thread cap is checked without reading a history; existing threads are counted once here.
  '0004-thread-message-totals': `
  ALTER TABLE threads ADD COLUMN message_count BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE threads ADD COLUMN message_bytes BIGINT NOT NULL DEFAULT 0;
  UPDATE threads SET
    message_count = (SELECT COUNT(*) FROM messages m WHERE m.thread_id = threads.thread_id),
    message_bytes = (SELECT COALESCE(SUM(octet_length(m.json)), 0) FROM messages m WHERE m.thread_id = threads.thread_id);
  `,
  // Remembered permissions (docs/approvals.md#remembered-permissions): the rules made by approvals with `remember`
  // (never deleted; revoking stamps revoked_at) and the decision record of every call a rule approved, one per call.
  '0005-permission-rules': `
  CREATE TABLE permission_rules (
    rule_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('thread', 'principal')),
    thread_id TEXT,
    tool_name TEXT NOT NULL,
    args_match TEXT,
    match_key TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    source_interrupt_id TEXT NOT NULL,
    revoked_at BIGINT
  );
  CREATE INDEX permission_rules_lookup ON permission_rules (owner_id, tool_name, match_key) WHERE revoked_at IS NULL;
  CREATE INDEX permission_rules_by_owner ON permission_rules (owner_id, created_at) WHERE revoked_at IS NULL;
  CREATE TABLE rule_decisions (
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, tool_call_id)
  );
  `,
  // Sessions and secrets (docs/decisions.md#operating-it): the anonymous-session secret no longer lives in the
  // database (replicas read INTERLUDE_SESSION_SECRET). Quotas (docs/protocol.md#limits): the concurrent-runs quota
  // counts an owner's running threads at admission.
  '0006-sessions-and-quotas': `
  DELETE FROM settings WHERE key = 'session_secret';
  CREATE INDEX threads_running_by_owner ON threads (owner_id) WHERE status = 'running';
  `,
  // The model boundary (docs/decisions.md#the-model-boundary): tokens each run's model calls used, for the run view
  // and the operator's caps per thread and per owner (docs/protocol.md#token-usage).
  '0007-run-token-usage': `
  ALTER TABLE runs ADD COLUMN input_tokens BIGINT NOT NULL DEFAULT 0, ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0;
  `,
  // Asking from inside a tool, subagents (docs/decisions.md#asking-from-inside-a-tool-and-subagents,
  // docs/approvals.md#asking-from-inside-a-tool): per call, the answers its `ctx.interrupt` calls received, in order,
  // and a subagent's progress; written only by the executing run.
  '0008-tool-checkpoints': `
  CREATE TABLE tool_checkpoints (
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    json TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, tool_call_id)
  );
  `,
  // Thread ids per owner (docs/decisions.md#threads-keyed-per-owner): a thread is keyed by its owner and the client's
  // id joined by U+001F (src/store/thread-key.ts), so another principal can no longer take an id first. Existing
  // threads get the key of their owner in every table that names a thread; permission rules keep the client's id
  // (they carry the owner).
  '0009-thread-keys-per-owner': `
  UPDATE messages x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE runs x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE events x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE interrupt_batches x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE interrupts x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE tool_calls x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE decisions x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE rule_decisions x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE tool_checkpoints x SET thread_id = t.owner_id || chr(31) || t.thread_id FROM threads t WHERE t.thread_id = x.thread_id;
  UPDATE threads SET thread_id = owner_id || chr(31) || thread_id;
  `,
  // Stale approvals (docs/approvals.md#stale-approvals): see the SQLite migration of the same id.
  '0010-stale-decisions': `
  ALTER TABLE decisions ADD COLUMN stale_interrupt_ids TEXT;
  `,
  '0011-rule-provenance': `
  ALTER TABLE permission_rules ADD COLUMN made_under TEXT;
  `,
  // The run queue (docs/decisions.md#a-durable-run-queue), as in SQLite.
  '0012-run-queue': `
  CREATE TABLE run_queue (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    input TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, run_id),
    UNIQUE (thread_id, seq)
  );
  CREATE INDEX run_queue_owner ON run_queue (owner_id);
  `,
  // Thread forks (docs/time-travel.md, docs/decisions.md#time-travel): each fork's parent and fork point; what a batch's
  // pause held (the messages written before it, the checkpoints of its asking calls), written with the batch, so a fork
  // at the batch pauses at the same question; the batch of a run by its run id (its public id); the thread's state
  // snapshots in the log, to find the state a fork at a message starts with without reading the log.
  '0013-thread-forks': `
  CREATE TABLE thread_forks (
    thread_id TEXT PRIMARY KEY,
    parent_thread_id TEXT NOT NULL,
    at_json TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX thread_forks_by_parent ON thread_forks (parent_thread_id, created_at);
  ALTER TABLE interrupt_batches ADD COLUMN pause_message_count BIGINT;
  ALTER TABLE interrupt_batches ADD COLUMN pause_checkpoints TEXT;
  CREATE INDEX interrupt_batches_by_run ON interrupt_batches (thread_id, run_id);
  CREATE INDEX events_state_snapshots ON events (thread_id, seq) WHERE type = 'STATE_SNAPSHOT';
  `,
  // A steer (docs/protocol.md#multitask) waits in the queue until the running run takes it, or starts like queued input.
  '0014-queued-steers': `
  ALTER TABLE run_queue ADD COLUMN steer INTEGER NOT NULL DEFAULT 0;
  `,
  // Votes (docs/approvals.md#organisation-policies): the batch's count of vote records, the condition every vote and
  // the claim it completes write under; a decision record's kind (`vote`, `escalation`; `reminder`: the once-only mark
  // of a reminder, never listed as a record) and policy stage.
  '0015-approval-votes': `
  ALTER TABLE interrupt_batches ADD COLUMN vote_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE decisions ADD COLUMN vote_kind TEXT CHECK (vote_kind IN ('vote', 'escalation', 'reminder'));
  ALTER TABLE decisions ADD COLUMN vote_stage INTEGER;
  `,
  // Bounded grants (docs/approvals.md#bounded-grants): `calls_left` is taken by one conditional update per call; the
  // lookup index holds only grants that may still apply.
  '0016-bounded-grants': `
  CREATE TABLE grants (
    grant_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('thread', 'principal')),
    thread_id TEXT,
    tool_name TEXT NOT NULL,
    match_json TEXT,
    calls INTEGER NOT NULL CHECK (calls > 0),
    calls_left INTEGER NOT NULL CHECK (calls_left >= 0),
    until_at BIGINT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    source_interrupt_id TEXT NOT NULL,
    made_under TEXT,
    revoked_at BIGINT
  );
  CREATE INDEX grants_lookup ON grants (owner_id, tool_name, created_at) WHERE revoked_at IS NULL AND calls_left > 0;
  CREATE TABLE grant_decisions (
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    grant_id TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, tool_call_id)
  );
  `,
  // A used decision link (docs/approvals.md#deciding-outside-the-app), written in the claim's transaction: a second
  // use of the same link finds its row, on any replica. Decision records may say every channel of `DecisionVia`.
  '0017-decision-links': `
  ALTER TABLE decisions DROP CONSTRAINT IF EXISTS decisions_via_check;
  ALTER TABLE decisions ADD CONSTRAINT decisions_via_check CHECK (via IN ('run', 'api', 'expiry', 'rule', 'grant', 'link', 'slack'));
  CREATE TABLE decision_links_used (
    link_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    used_at BIGINT NOT NULL
  );
  `,
  // A bounded grant's calls as slot rows (docs/decisions.md#bounded-grants): a take claims one free slot, skipping
  // slots that concurrent takes hold locked, so takes do not queue on one row. Calls left are the free slots
  // (`grants.calls_left` is no longer written after the grant is made); an existing grant gets its remaining calls' slots.
  '0018-grant-slots': `
  CREATE TABLE grant_slots (
    grant_id TEXT NOT NULL,
    slot INTEGER NOT NULL,
    used_by_call TEXT,
    used_at BIGINT,
    PRIMARY KEY (grant_id, slot)
  );
  INSERT INTO grant_slots (grant_id, slot) SELECT grant_id, generate_series(1, calls_left) FROM grants;
  `,
  // A take's slot lock as a statement of its own (docs/decisions.md#bounded-grants): a take that meets a slot another
  // take has just committed re-checks that row (PostgreSQL's EvalPlanQual), which sets up every part of the statement
  // again — a millisecond and more for the whole take, microseconds for this one. VOLATILE: its query takes a snapshot
  // of its own (and may lock rows).
  // The lock is the one the take's UPDATE then takes (NO KEY UPDATE), so locking and updating a slot is one lock.
  '0019-grant-slot-locks': `
  CREATE FUNCTION grant_free_slots(grant_ids TEXT[], counts INTEGER[]) RETURNS TABLE (grant_id TEXT, slot INTEGER)
  LANGUAGE plpgsql VOLATILE AS $fn$
  BEGIN
    RETURN QUERY
      SELECT f.grant_id, f.slot FROM unnest(grant_ids, counts) AS c(g, k) CROSS JOIN LATERAL (
        SELECT s.grant_id, s.slot FROM grant_slots s
        WHERE s.grant_id = c.g AND s.used_by_call IS NULL
        ORDER BY s.slot LIMIT c.k FOR NO KEY UPDATE SKIP LOCKED
      ) f;
  END
  $fn$;
  `,
}

/** The SQL of each schema version, in order: a database whose `schema_migrations` has 1..k has run the first k. */
export const PG_MIGRATIONS: readonly string[] = migrationSteps(POSTGRES_MIGRATIONS).map((step) => step.sql)

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
