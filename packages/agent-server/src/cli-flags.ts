import { EXPIRY_POLICIES } from './agent/expiry-options.ts'
import { SERVER_DEFAULTS } from './config/defaults.ts'
import { MULTITASK_STRATEGIES } from './config/multitask.ts'
import { DEFAULT_LIMITS } from './config/limits.ts'
import type { Limits } from './config/limits.ts'
import type { Flag } from './cli-flag-kit.ts'
import { LOG_LEVEL_ENV, LOG_LEVELS } from './observability/logger.ts'
import { DEFAULT_SCHEMA } from './store/postgres/options.ts'

/** The CLI's own defaults, where they differ from `startServer`'s (`SERVER_DEFAULTS`). */
export const CLI_DEFAULTS = {
  port: 8787,
  db: '.data/interlude.db',
  workers: 1,
  /** Scripted model: a visible stream in the workbench. */
  pacingMs: 25,
  /** Not `defaultLogLevel()`: a CLI started under a test runner still logs. */
  logLevel: 'info',
} as const

const QUOTAS = 'Quotas and limits (0 turns one off; README "Quotas and limits")'
const MODELS = 'Model bounds and token caps (docs/protocol.md#token-usage; openai: with --model openai only)'

/**
 * Every flag of `interlude-server`, once: `readFlags` derives the `parseArgs` options and the range checks from it,
 * `usageText` the usage. `default` is the CLI's value when a flag is absent; `shown` a server default the usage
 * prints while the flag stays absent. Checks across flags are in cli-args.ts.
 */
export const FLAGS = {
  port: {
    type: 'integer',
    max: 65535,
    arg: '<n>',
    help: 'port to listen on (0 = any free port)',
    default: CLI_DEFAULTS.port,
  },
  host: { type: 'string', arg: '<host>', help: 'interface to bind', shown: SERVER_DEFAULTS.host },
  db: {
    type: 'string',
    arg: '<path | url>',
    help:
      'SQLite file, created on first start, or a postgres://user:pass@host:port/db URL (PostgreSQL, several ' +
      'replicas)',
    default: CLI_DEFAULTS.db,
  },
  'db-schema': { type: 'string', arg: '<name>', help: 'PostgreSQL schema of the tables', shown: DEFAULT_SCHEMA },
  'db-pool': {
    type: 'integer',
    positive: true,
    arg: '<n>',
    help: 'PostgreSQL connections for run work, per process',
    shown: SERVER_DEFAULTS.dbPool.max,
    into: { group: 'dbPool', key: 'max' },
  },
  'db-admission-pool': {
    type: 'integer',
    positive: true,
    arg: '<n>',
    help: 'PostgreSQL connections kept open for admission, per process',
    shown: SERVER_DEFAULTS.dbPool.admissionMax,
    into: { group: 'dbPool', key: 'admissionMax' },
  },
  shared: {
    type: 'boolean',
    help:
      'several server processes share this SQLite file (always so for PostgreSQL): runs left running are closed ' +
      'once their lease ends, not all at startup',
  },
  workers: {
    type: 'integer',
    positive: true,
    max: 64,
    arg: '<n>',
    help:
      'serve with n processes on one port, each a replica on the shared store: PostgreSQL, or SQLite with ' +
      '--shared. SIGTERM/SIGINT reach every worker. Per-principal quotas are per process: n workers allow n times ' +
      'each --max-… quota',
    default: CLI_DEFAULTS.workers,
  },
  'run-lease-ms': {
    type: 'number',
    positive: true,
    arg: '<ms>',
    help: 'lease of a running run, renewed by its process',
    shown: SERVER_DEFAULTS.runLeaseMs,
  },
  'poll-ms': {
    type: 'number',
    positive: true,
    arg: '<ms>',
    help: 'log poll for live tails of runs in other processes; PostgreSQL also wakes them by LISTEN/NOTIFY',
    shown: `${SERVER_DEFAULTS.pollMs}; ${SERVER_DEFAULTS.changeFeedPollMs} with PostgreSQL`,
  },
  model: {
    type: 'string',
    choices: ['scripted', 'openai'],
    arg: '<name>',
    help: 'scripted | openai (openai reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL)',
    shown: SERVER_DEFAULTS.model,
  },
  'interrupt-ttl': {
    type: 'number',
    positive: true,
    arg: '<s>',
    help: 'seconds before an interrupt batch expires',
    shown: SERVER_DEFAULTS.interruptTtlSeconds,
  },
  'on-expiry': {
    type: 'string',
    choices: EXPIRY_POLICIES,
    arg: '<policy>',
    help: 'deny | cancel | keep: what an expired batch gets, for tools that set no onExpiry',
    shown: 'deny for approvals, cancel for questions',
  },
  multitask: {
    type: 'string',
    choices: MULTITASK_STRATEGIES,
    arg: '<strategy>',
    help: 'reject | enqueue | interrupt | steer: what input for a busy thread does when it names no strategy',
    shown: SERVER_DEFAULTS.multitask,
  },
  token: {
    type: 'string',
    multiple: true,
    arg: '<name=secret>',
    help:
      'bearer token for principal <name>; repeatable (visible in ps: prefer --tokens-file or INTERLUDE_TOKENS). ' +
      'Without tokens, signed anonymous-session cookies are used (secret: INTERLUDE_SESSION_SECRET, or ' +
      '<db>.session-secret)',
  },
  'tokens-file': {
    type: 'string',
    arg: '<path>',
    help:
      'bearer tokens, one name=secret per line (# comments); also INTERLUDE_TOKENS (name=secret,name=secret). ' +
      'Whitespace or a shared secret is refused',
  },
  'session-max-age': {
    type: 'integer',
    positive: true,
    arg: '<s>',
    help: 'lifetime of an anonymous session from its issue time',
    shown: SERVER_DEFAULTS.sessionMaxAgeSeconds,
  },
  'secure-cookies': {
    type: 'boolean',
    help: 'always Secure + __Host- session cookies (otherwise: when the request is https)',
  },
  'trust-proxy': { type: 'boolean', help: 'believe X-Forwarded-Proto from a TLS-terminating proxy' },
  approver: {
    type: 'string',
    multiple: true,
    arg: '<name>',
    help: "principal who may decide every interrupt batch (besides each thread's owner); repeatable",
  },
  group: {
    type: 'string',
    multiple: true,
    arg: '<name=a,b>',
    help: 'a named group of principals for tool policies (of: ["group:<name>"], docs/approvals.md); repeatable',
  },
  'production-quorum': {
    type: 'integer',
    positive: true,
    max: 100,
    arg: '<n>',
    help: 'demo agent: approvals of --approver principals a deploy to production needs (n > 1: not the requester)',
    default: 1,
  },
  oncall: {
    type: 'string',
    multiple: true,
    arg: '<name>',
    help: "demo agent: principal who may post notify_oncall's result to the owner's thread; repeatable or a comma list",
  },
  webhook: {
    type: 'string',
    multiple: true,
    arg: '<url>',
    help:
      'POST interrupt.opened / .decided / .expired and run.failed here, signed with INTERLUDE_WEBHOOK_SECRET ' +
      '(whsec_<base64>); repeatable',
  },
  'public-url': {
    type: 'string',
    arg: '<url>',
    help:
      'where the server is reached from outside: interrupt.opened webhooks then carry signed, single-use decision ' +
      'links {url}{base-path}/decide/<token> (signed with the session secret)',
  },
  'slack-user-map': {
    type: 'string',
    arg: '<map>',
    help:
      'decide in Slack: Slack user id → principal, as U123=alice,U456=bob or a JSON file; enables ' +
      '{base-path}/integrations/slack/actions (signing secret from INTERLUDE_SLACK_SIGNING_SECRET)',
  },
  'slack-webhook': {
    type: 'string',
    arg: '<url>',
    help: 'Slack incoming webhook: each approval batch is posted there with Approve/Deny buttons (needs --slack-user-map)',
  },
  'cors-origin': {
    type: 'string',
    multiple: true,
    arg: '<url>',
    help:
      "allow browser apps on this origin (e.g. https://app.example.com) to call the API; repeatable; '*' for any " +
      'origin',
  },
  agent: {
    type: 'string',
    arg: '<module>',
    help:
      'serve the agent a module default-exports (an AgentDefinition, or a function returning one) instead of the ' +
      'demo release assistant',
  },
  static: { type: 'string', arg: '<dir>', help: 'serve a built workbench from <dir> at /' },
  'pacing-ms': {
    type: 'number',
    arg: '<ms>',
    help: 'scripted model: delay between streamed tokens',
    default: CLI_DEFAULTS.pacingMs,
  },
  'base-path': { type: 'string', arg: '<path>', help: 'mount point of the API', shown: SERVER_DEFAULTS.basePath },
  'log-level': {
    type: 'string',
    choices: LOG_LEVELS,
    arg: '<level>',
    help: `${LOG_LEVELS.join(' | ')}: JSON log lines on stdout`,
    env: LOG_LEVEL_ENV,
    default: CLI_DEFAULTS.logLevel,
  },
  'metrics-port': {
    type: 'integer',
    max: 65535,
    arg: '<n>',
    help: 'serve Prometheus metrics at http://<metrics-host>:<n>/metrics, without authentication (0 = any free port)',
  },
  'metrics-host': {
    type: 'string',
    arg: '<host>',
    help: 'interface of --metrics-port',
    shown: SERVER_DEFAULTS.metricsHost,
  },
  'metrics-principal': {
    type: 'string',
    multiple: true,
    arg: '<name>',
    help: 'principal who may read {base-path}/metrics with its token (approvers may too); repeatable',
  },
  'shutdown-grace-ms': {
    type: 'number',
    arg: '<ms>',
    help:
      'on SIGTERM/SIGINT, how long running turns may finish before they are handed over to the restart or another ' +
      'replica; a second signal exits at once',
    shown: SERVER_DEFAULTS.shutdownGraceMs,
  },
  'no-admission-turns': {
    type: 'boolean',
    help:
      'admissions of a burst no longer take turns with the event loop (for comparisons; docs/architecture.md, ' +
      '"Admission under a burst")',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },

  'no-quotas': { type: 'boolean', help: 'all per-principal quotas off (load tests)', section: QUOTAS },
  'max-runs-per-principal': limit('maxConcurrentRunsPerPrincipal', 'concurrent runs of one principal'),
  'max-streams-per-principal': limit('maxOpenStreamsPerPrincipal', 'open event streams of one principal'),
  'max-new-threads-per-minute': limit('maxNewThreadsPerMinute', 'new threads of one principal per minute'),
  'max-requests-per-second': limit('maxRequestsPerSecond', 'requests of one principal per second'),
  'max-failed-auth-per-minute': limit('maxFailedAuthPerMinute', 'failed authentications per client address'),
  'max-anonymous-sessions-per-minute': limit(
    'maxAnonymousSessionsPerMinute',
    'new anonymous sessions per client address (they share its quotas)',
  ),
  'max-body-bytes': limit('maxBodyBytes', 'request body size', { positive: true }),
  'max-buffered-body-bytes': limit('maxBufferedBodyBytes', 'bodies buffered at once, all requests'),
  'body-idle-timeout-ms': limit('bodyIdleTimeoutMs', 'a body sending nothing this long is refused', { arg: '<ms>' }),
  'headers-timeout-ms': limit('headersTimeoutMs', 'the header block must arrive within it', { arg: '<ms>' }),
  'request-timeout-ms': limit('requestTimeoutMs', 'the whole request must arrive within it', { arg: '<ms>' }),
  'max-connections': limit(
    'maxConnections',
    'open connections; idle ones give way, then a short wait (at most ulimit -n / 2)',
  ),
  'max-connections-per-ip': limit(
    'maxConnectionsPerIp',
    'open connections per client address (not applied with --trust-proxy)',
  ),
  // History bounds (docs/decisions.md#bounded-histories) cannot be turned off: 0 is refused.
  'thread-max-messages': limit('threadMaxMessages', 'messages one thread may hold (more: 413 THREAD_TOO_LARGE)', {
    positive: true,
  }),
  'thread-max-bytes': limit('threadMaxBytes', 'bytes of messages one thread may hold', { positive: true }),
  'model-window-messages': limit('modelWindowMessages', 'newest messages the model sees per call', { positive: true }),
  'model-window-bytes': limit('modelWindowBytes', 'bytes of newest messages the model sees per call', {
    positive: true,
  }),

  'model-timeout-ms': openai('timeoutMs', 'openai: time to response headers, per attempt (0 = off)'),
  'model-idle-timeout-ms': openai(
    'idleTimeoutMs',
    'openai: silence between streamed chunks, SSE comments do not count (0 = off)',
  ),
  'model-total-timeout-ms': openai('totalTimeoutMs', 'openai: one whole model call, retries included (0 = off)'),
  'model-max-retries': openai('maxRetries', 'openai: retries of 408/409/429/5xx/connection errors'),
  'model-max-retry-delay-ms': openai('maxRetryDelayMs', 'openai: longest back-off wait, whatever Retry-After says'),
  'model-max-output-tokens': openai(
    'maxCompletionTokens',
    'openai: max_completion_tokens of every request (0 = not sent)',
  ),
  'max-tool-argument-bytes': limit('maxToolArgumentBytes', 'larger tool-call arguments are rejected and not kept', {
    positive: true,
    section: MODELS,
  }),
  'max-tokens-per-thread': tokenCap('maxTokensPerThread', 'token cap of one thread (input + output)'),
  'max-tokens-per-principal': tokenCap('maxTokensPerPrincipal', 'token cap of all threads of one principal'),
} as const satisfies Readonly<Record<string, Flag>>

/** A flag of one of `Limits`: a non-negative integer, its default from `DEFAULT_LIMITS`. */
function limit<K extends keyof Limits>(
  key: K,
  help: string,
  { positive = false, arg = '<n>', section = QUOTAS }: { positive?: boolean; arg?: string; section?: string } = {},
) {
  const into = { group: 'limits', key }
  return { type: 'integer', positive, arg, help, shown: DEFAULT_LIMITS[key], section, into } as const
}

/** A flag of the OpenAI provider's bounds: a non-negative integer, its default from `SERVER_DEFAULTS.openai`. */
function openai<K extends keyof typeof SERVER_DEFAULTS.openai>(key: K, help: string) {
  const into = { group: 'openai', key }
  return {
    type: 'integer',
    arg: key.endsWith('Ms') ? '<ms>' : '<n>',
    help,
    shown: SERVER_DEFAULTS.openai[key],
    section: MODELS,
    into,
  } as const
}

/** A token cap (`UsageOptions`): a positive integer; none by default. */
function tokenCap<K extends 'maxTokensPerThread' | 'maxTokensPerPrincipal'>(key: K, help: string) {
  const into = { group: 'usage', key }
  return { type: 'integer', positive: true, arg: '<n>', help, shown: 'none', section: MODELS, into } as const
}
