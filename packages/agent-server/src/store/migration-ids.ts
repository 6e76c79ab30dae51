/**
 * The schema's migrations, one id each, in the order they apply: one list for both stores. Each dialect keys its SQL by
 * these ids (`sqlite/migrations.ts`, `postgres/migrations.ts`), so migration N is the same change in SQLite and in
 * PostgreSQL; `migration-ids.test.ts` holds both to exactly this list, in this order. A new migration appends an id
 * here and its SQL in both dialects. Never rename, reorder or remove an id, and never edit a shipped migration's SQL.
 *
 * How an id maps to the version number a database records (SQLite's `PRAGMA user_version`, PostgreSQL's
 * `schema_migrations.version`) is in `migration-steps.ts`.
 */
export const MIGRATION_IDS = [
  /** Threads, append-only messages, runs, the per-thread event log, interrupt batches, the tool-call ledger, settings. */
  '0001-initial',
  /** Run leases (executor, lease end) and the cancel flag, so that several processes can share one database. */
  '0002-run-leases',
  /** Approvals from anywhere (docs/approvals.md): titles, expiry policies, the inbox, decisions, the webhook outbox. */
  '0003-approvals-from-anywhere',
  /** Running totals of each thread's messages, for the thread cap (docs/protocol.md#limits). */
  '0004-thread-message-totals',
  /** Remembered permissions (docs/approvals.md#remembered-permissions): the rules and the calls they approved. */
  '0005-permission-rules',
  /** The session secret leaves the database; an owner's running threads are counted for the concurrent-runs quota. */
  '0006-sessions-and-quotas',
  /** Tokens each run's model calls used (docs/protocol.md#token-usage). */
  '0007-run-token-usage',
  /** Per call, the answers its `ctx.interrupt` calls received and a subagent's progress. */
  '0008-tool-checkpoints',
  /** Threads keyed by their owner and the client's id (docs/decisions.md#threads-keyed-per-owner). */
  '0009-thread-keys-per-owner',
  /** The approvals of a decision that went stale (docs/approvals.md#stale-approvals): its record's `outcome`. */
  '0010-stale-decisions',
  /** What a remembered rule was made under (docs/approvals.md#who-may-what). */
  '0011-rule-provenance',
  /** Input queued on a busy thread (docs/decisions.md#a-durable-run-queue), in admission order per thread. */
  '0012-run-queue',
  /** Thread forks (docs/time-travel.md): each fork's origin, and what a batch's pause held, so a fork can pause there again. */
  '0013-thread-forks',
  /** Steers (docs/protocol.md#multitask): queued input the running run takes before its next model request. */
  '0014-queued-steers',
  /** Votes under organisation policies (docs/approvals.md#organisation-policies): a batch's vote count, a record's kind. */
  '0015-approval-votes',
  /** Bounded grants (docs/approvals.md#bounded-grants): the grants, their calls left, the calls they approved. */
  '0016-bounded-grants',
  /** Decision links (docs/approvals.md#deciding-outside-the-app): the links already used, so each decides once. */
  '0017-decision-links',
  /** A grant's calls as slot rows (docs/decisions.md#bounded-grants), so concurrent takes claim different rows. */
  '0018-grant-slots',
  /** A grant's free slots locked by a function of their own (docs/decisions.md#bounded-grants); PostgreSQL only. */
  '0019-grant-slot-locks',
] as const

export type MigrationId = (typeof MIGRATION_IDS)[number]
