import { parseArgs } from 'node:util'
import type { ExpiryPolicy } from '@interlude/protocol'
import { EXPIRY_POLICIES, isExpiryPolicy } from './agent/expiry-options.ts'
import type { Limits } from './core/limits.ts'
import { resolveWebhookEndpoints, WEBHOOK_SECRET_ENV } from './webhooks/webhook-config.ts'
import { checkCorsOptions } from './config/cors-options.ts'
import { isLogLevel, LOG_LEVEL_ENV, LOG_LEVELS } from './observability/logger.ts'
import type { LogLevel } from './observability/logger.ts'
import fs from 'node:fs'
import { tokensProblem } from './auth/authenticate.ts'
import { addToken, parseTokenEntries, TOKENS_ENV } from './auth/token-sources.ts'
import { SESSION_SECRET_ENV } from './auth/session-secret.ts'
import { NO_PRINCIPAL_QUOTAS } from './core/limits.ts'
export const USAGE = `Usage: interlude-server [options]

  --port <n>            port to listen on (default 8787; 0 = any free port)
  --host <host>         interface to bind (default 127.0.0.1)
  --db <path | url>     SQLite file, created on first start (default .data/interlude.db), or a
                        postgres://user:pass@host:port/db URL (PostgreSQL, several replicas)
  --db-schema <name>    PostgreSQL schema of the tables (default: interlude)
  --db-pool <n>         PostgreSQL connections for run work, per process (default 20)
  --db-admission-pool <n>
                        PostgreSQL connections kept open for admission, per process (default 10)
  --shared              several server processes share this SQLite file (default for PostgreSQL):
                        runs left running are closed once their lease ends, not all at startup
  --workers <n>         serve with n processes on one port (default 1), each a replica on the shared
                        store: PostgreSQL, or SQLite with --shared. SIGTERM/SIGINT reach every worker
  --run-lease-ms <ms>   lease of a running run, renewed by its process (default 15000)
  --poll-ms <ms>        log poll for live tails of runs in other processes (default 250; 1000
                        with PostgreSQL, which also uses LISTEN/NOTIFY)
  --model <name>        scripted | openai (default scripted; openai reads OPENAI_API_KEY,
                        OPENAI_BASE_URL, OPENAI_MODEL)
  --interrupt-ttl <s>   seconds before an interrupt batch expires (default 3600)
  --on-expiry <policy>  deny | cancel | keep: what an expired batch gets, for tools that set no
                        onExpiry (default: deny for approvals, cancel for questions)
  --token <name=secret> bearer token for principal <name>; repeatable (visible in ps: prefer
                        --tokens-file or INTERLUDE_TOKENS). Without tokens, signed anonymous-session
                        cookies are used (secret: INTERLUDE_SESSION_SECRET, or <db>.session-secret)
  --tokens-file <path>  bearer tokens, one name=secret per line (# comments); also INTERLUDE_TOKENS
                        (name=secret,name=secret). Whitespace or a shared secret is refused
  --session-max-age <s> lifetime of an anonymous session from its issue time (default 2592000 = 30 d)
  --secure-cookies      always Secure + __Host- session cookies (default: when the request is https)
  --trust-proxy         believe X-Forwarded-Proto from a TLS-terminating proxy
  --approver <name>     principal who may decide every interrupt batch (besides each
                        thread's owner); repeatable
  --webhook <url>       POST interrupt.opened / .decided / .expired and run.failed here,
                        signed with INTERLUDE_WEBHOOK_SECRET (whsec_<base64>); repeatable
  --cors-origin <url>   allow browser apps on this origin (e.g. https://app.example.com) to call the
                        API; repeatable; '*' for any origin
  --agent <module>      serve the agent a module default-exports (an AgentDefinition, or a function
                        returning one) instead of the demo release assistant
  --static <dir>        serve a built workbench from <dir> at /
  --pacing-ms <ms>      scripted model: delay between streamed tokens (default 25)
  --base-path <path>    mount point of the API (default /api/agent)
  --log-level <level>   fatal | error | warn | info | debug | trace | silent: JSON log lines on
                        stdout (default: INTERLUDE_LOG_LEVEL, else info)
  --metrics-port <n>    serve Prometheus metrics at http://<metrics-host>:<n>/metrics, without
                        authentication (0 = any free port)
  --metrics-host <host> interface of --metrics-port (default 127.0.0.1)
  --metrics-principal <name>
                        principal who may read {base-path}/metrics with its token (approvers
                        may too); repeatable
  --thread-max-messages <n>  messages one thread may hold (default 10000; more: 413 THREAD_TOO_LARGE)
  --thread-max-bytes <n>     bytes of messages one thread may hold (default 33554432 = 32 MiB)
  --model-window-messages <n>  newest messages the model sees per call (default 200)
  --model-window-bytes <n>   bytes of newest messages the model sees per call (default 262144)
  --shutdown-grace-ms <ms>
                        on SIGTERM/SIGINT, how long running turns may finish before they are
                        handed over to the restart or another replica (default 10000); a second
                        signal exits at once
  --no-admission-turns  admissions of a burst no longer take turns with the event loop (for
                        comparisons; docs/architecture.md, "Admission under a burst")
 Quotas and limits (0 turns one off; README "Quotas and limits"):
  --max-runs-per-principal <n>      concurrent runs of one principal (default 16)
  --max-streams-per-principal <n>   open event streams of one principal (default 32)
  --max-new-threads-per-minute <n>  new threads of one principal per minute (default 60)
  --max-requests-per-second <n>     requests of one principal per second (default 100)
  --no-quotas                       all per-principal quotas off (load tests)
  --max-body-bytes <n>              request body size (default 8388608)
  --max-buffered-body-bytes <n>     bodies buffered at once, all requests (default 67108864)
  --body-idle-timeout-ms <ms>       a body sending nothing this long is refused (default 10000)
  --headers-timeout-ms <ms>         the header block must arrive within it (default 10000)
  --request-timeout-ms <ms>         the whole request must arrive within it (default 60000)
  --max-connections <n>             open connections (default 1000; keep below ulimit -n)
  --max-connections-per-ip <n>      open connections per client address (default 256; 0 behind a proxy)
  --model-timeout-ms <ms>          openai: time to response headers, per attempt (default 60000; 0 = off)
  --model-idle-timeout-ms <ms>     openai: silence between streamed chunks, SSE comments do not count
                                   (default 60000; 0 = off)
  --model-total-timeout-ms <ms>    openai: one whole model call, retries included (default 300000; 0 = off)
  --model-max-retries <n>          openai: retries of 408/409/429/5xx/connection errors (default 2)
  --model-max-retry-delay-ms <ms>  openai: longest back-off wait, whatever Retry-After says (default 10000)
  --model-max-output-tokens <n>    openai: max_completion_tokens of every request (default 4096; 0 = not sent)
  --max-tool-argument-bytes <n>    larger tool-call arguments are rejected and not kept (default 65536)
  --max-tokens-per-thread <n>      token cap of one thread (input + output; default none)
  --max-tokens-per-principal <n>   token cap of all threads of one principal (default none)
  -h, --help            show this help
`

export interface CliOptions {
  readonly port: number
  readonly host: string
  readonly db: string
  readonly dbSchema: string | undefined
  /** `false` with --shared or a PostgreSQL URL. */
  readonly exclusive: boolean
  /** `--db-pool`, `--db-admission-pool` (PostgreSQL only). */
  readonly dbPool: { readonly max?: number; readonly admissionMax?: number }
  /** `--workers`: server processes sharing the port (1: this process serves). */
  readonly workers: number
  readonly runLeaseMs: number | undefined
  readonly pollMs: number | undefined
  readonly model: 'scripted' | 'openai'
  readonly interruptTtlSeconds: number
  /** `undefined`: by kind (docs/approvals.md#deadlines). */
  readonly onExpiry: ExpiryPolicy | undefined
  readonly tokens: Record<string, string> | undefined
  readonly staticDir: string | undefined
  readonly pacingMs: number
  readonly basePath: string
  /** `--approver`, in order, without repeats. */
  readonly approvers: readonly string[]
  /** `--webhook` URLs (signed with `INTERLUDE_WEBHOOK_SECRET`). */
  readonly webhooks: readonly string[]
  /** `--shutdown-grace-ms`: `undefined` = the server's default (10000). */
  readonly shutdownGraceMs?: number | undefined
  /** `--no-admission-turns`: every admission runs as soon as its request is read (for comparisons). */
  readonly admissionTurns: boolean
  /** `--cors-origin`, checked like `AgentServerOptions.cors`. */
  readonly corsOrigins: readonly string[]
  /** `--agent`: a module whose default export is the agent (loaded by the CLI). */
  readonly agentModule: string | undefined
  /** `--log-level`, else `INTERLUDE_LOG_LEVEL`, else `info`. */
  readonly logLevel: LogLevel
  readonly metricsPort: number | undefined
  readonly metricsHost: string
  readonly metricsPrincipals: readonly string[]
  /** Quota and limit flags (only those given). */
  readonly limits: Partial<Limits>
  /** `--session-max-age` in seconds. */
  readonly sessionMaxAgeSeconds: number | undefined
  /** `--secure-cookies`: `true`; otherwise `'auto'`. */
  readonly secureCookies: true | 'auto'
  readonly trustProxy: boolean
  /** Where the tokens came from, for the startup warning about `--token` in `ps`. */
  readonly tokensOnCommandLine: boolean
  /** `--model-*` flags: options of the OpenAI provider (issue 14). */
  readonly openai: CliOpenAIOptions
  /** `--max-tool-argument-bytes` (`Limits.maxToolArgumentBytes`). */
  readonly maxToolArgumentBytes: number | undefined
  /** `--max-tokens-per-thread`, `--max-tokens-per-principal`. */
  readonly usage: { readonly maxTokensPerThread?: number; readonly maxTokensPerPrincipal?: number }
}

export interface CliOpenAIOptions {
  readonly timeoutMs?: number
  readonly idleTimeoutMs?: number
  readonly totalTimeoutMs?: number
  readonly maxRetries?: number
  readonly maxRetryDelayMs?: number
  readonly maxCompletionTokens?: number
}

const MODEL_FLAGS = {
  'model-timeout-ms': 'timeoutMs',
  'model-idle-timeout-ms': 'idleTimeoutMs',
  'model-total-timeout-ms': 'totalTimeoutMs',
  'model-max-retries': 'maxRetries',
  'model-max-retry-delay-ms': 'maxRetryDelayMs',
  'model-max-output-tokens': 'maxCompletionTokens',
} as const satisfies Record<string, keyof CliOpenAIOptions>

function nonNegativeInteger(flag: string, text: string, allowZero: boolean): number {
  const n = positiveNumber(flag, text, allowZero)
  if (!Number.isSafeInteger(n)) throw new Error(`${flag} must be an integer`)
  return n
}

/** Flag → limit, each a non-negative integer. */
const LIMIT_FLAGS = {
  'max-runs-per-principal': 'maxConcurrentRunsPerPrincipal',
  'max-streams-per-principal': 'maxOpenStreamsPerPrincipal',
  'max-new-threads-per-minute': 'maxNewThreadsPerMinute',
  'max-requests-per-second': 'maxRequestsPerSecond',
  'max-body-bytes': 'maxBodyBytes',
  'max-buffered-body-bytes': 'maxBufferedBodyBytes',
  'body-idle-timeout-ms': 'bodyIdleTimeoutMs',
  'headers-timeout-ms': 'headersTimeoutMs',
  'request-timeout-ms': 'requestTimeoutMs',
  'max-connections': 'maxConnections',
  'max-connections-per-ip': 'maxConnectionsPerIp',
  'thread-max-messages': 'threadMaxMessages',
  'thread-max-bytes': 'threadMaxBytes',
  'model-window-messages': 'modelWindowMessages',
  'model-window-bytes': 'modelWindowBytes',
} as const satisfies Record<string, keyof Limits>

/** History bounds (docs/protocol.md#limits) cannot be turned off: 0 is refused. */
const POSITIVE_LIMITS = new Set<string>([
  'threadMaxMessages',
  'threadMaxBytes',
  'modelWindowMessages',
  'modelWindowBytes',
])

function limitFlags(values: Readonly<Record<string, unknown>>, noQuotas: boolean): Partial<Limits> {
  const limits: Record<string, number> = noQuotas ? { ...NO_PRINCIPAL_QUOTAS } : {}
  for (const [flag, key] of Object.entries(LIMIT_FLAGS)) {
    const text = values[flag]
    if (typeof text !== 'string') continue
    const n = Number(text)
    if (!Number.isInteger(n) || n < 0 || text.trim() === '') throw new Error(`--${flag} must be a non-negative integer`)
    if ((key === 'maxBodyBytes' || POSITIVE_LIMITS.has(key)) && n === 0) throw new Error(`--${flag} must be positive`)
    limits[key] = n
  }
  return limits as Partial<Limits>
}

/** `--token` flags, `--tokens-file` and `INTERLUDE_TOKENS`, merged (a principal named twice is an error), then checked. */
function collectTokens(
  flags: readonly string[],
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> | undefined {
  const tokens: Record<string, string> = {}
  for (const spec of flags) {
    const eq = spec.indexOf('=')
    if (eq <= 0 || eq === spec.length - 1)
      throw new Error(`--token must look like name=secret (got "${spec.slice(0, Math.max(eq, 0))}=…")`)
    addToken(tokens, spec.slice(0, eq), spec.slice(eq + 1), '--token')
  }
  if (file !== undefined) {
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (error) {
      throw new Error(`--tokens-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
    parseTokenEntries(text, `--tokens-file ${file}`, { commas: false, into: tokens })
  }
  const fromEnv = env[TOKENS_ENV]
  if (fromEnv !== undefined && fromEnv.trim() !== '')
    parseTokenEntries(fromEnv, TOKENS_ENV, { commas: true, into: tokens })
  if (Object.keys(tokens).length === 0) return undefined
  const problem = tokensProblem(tokens)
  if (problem !== undefined) throw new Error(problem)
  return tokens
}

function positiveNumber(flag: string, text: string, allowZero: boolean): number {
  const n = Number(text)
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0))
    throw new Error(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} number`)
  return n
}

/**
 * `--webhook` URLs, checked like the server checks them (absolute http(s), each once, a usable secret in `env`),
 * so a misconfiguration is a bad flag (exit 2) rather than a failed start.
 */
function webhookUrls(urls: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  try {
    resolveWebhookEndpoints(
      urls.map((url) => ({ url })),
      env,
    )
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^webhooks\[(\d+)\]/, '--webhook #$1') : ''
    throw new Error(`${reason} (--webhook signs with ${WEBHOOK_SECRET_ENV})`)
  }
  return [...urls]
}

/** Parses argv (without node and script) into options; throws with a message on bad flags. */
export function parseCliArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): CliOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      'db-schema': { type: 'string' },
      shared: { type: 'boolean' },
      workers: { type: 'string' },
      'db-pool': { type: 'string' },
      'db-admission-pool': { type: 'string' },
      'run-lease-ms': { type: 'string' },
      'poll-ms': { type: 'string' },
      model: { type: 'string' },
      'interrupt-ttl': { type: 'string' },
      'on-expiry': { type: 'string' },
      token: { type: 'string', multiple: true },
      approver: { type: 'string', multiple: true },
      webhook: { type: 'string', multiple: true },
      'cors-origin': { type: 'string', multiple: true },
      agent: { type: 'string' },
      static: { type: 'string' },
      'pacing-ms': { type: 'string' },
      'base-path': { type: 'string' },
      'log-level': { type: 'string' },
      'metrics-port': { type: 'string' },
      'metrics-host': { type: 'string' },
      'metrics-principal': { type: 'string', multiple: true },
      'shutdown-grace-ms': { type: 'string' },
      'tokens-file': { type: 'string' },
      'session-max-age': { type: 'string' },
      'secure-cookies': { type: 'boolean' },
      'trust-proxy': { type: 'boolean' },
      'no-quotas': { type: 'boolean' },
      'no-admission-turns': { type: 'boolean' },
      ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
      'model-timeout-ms': { type: 'string' },
      'model-idle-timeout-ms': { type: 'string' },
      'model-total-timeout-ms': { type: 'string' },
      'model-max-retries': { type: 'string' },
      'model-max-retry-delay-ms': { type: 'string' },
      'model-max-output-tokens': { type: 'string' },
      'max-tool-argument-bytes': { type: 'string' },
      'max-tokens-per-thread': { type: 'string' },
      'max-tokens-per-principal': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) return 'help'
  const model = values.model ?? 'scripted'
  if (model !== 'scripted' && model !== 'openai') throw new Error('--model must be scripted or openai')
  const onExpiry = values['on-expiry']
  if (onExpiry !== undefined && !isExpiryPolicy(onExpiry))
    throw new Error(`--on-expiry must be ${EXPIRY_POLICIES.join(', ').replace(/, (\w+)$/, ' or $1')}`)
  const db = values.db ?? '.data/interlude.db'
  const postgres = /^postgres(ql)?:\/\//i.test(db)
  if (values['db-schema'] !== undefined && !postgres) throw new Error('--db-schema needs a postgres:// --db URL')
  if (values['db-schema'] !== undefined && !/^[A-Za-z_][\w$]{0,62}$/.test(values['db-schema']))
    throw new Error('--db-schema must be a plain identifier')
  const tokens = collectTokens(values.token ?? [], values['tokens-file'], env)
  if (postgres && tokens === undefined && !env[SESSION_SECRET_ENV])
    throw new Error(
      `--db postgres://… without tokens needs ${SESSION_SECRET_ENV} (one session secret for every replica), or --tokens-file`,
    )
  const sessionMaxAge = values['session-max-age']
  if (sessionMaxAge !== undefined && !(Number.isInteger(Number(sessionMaxAge)) && Number(sessionMaxAge) > 0))
    throw new Error('--session-max-age must be a positive number of seconds')
  const approvers = [...new Set(values.approver ?? [])]
  if (approvers.some((name) => name.trim() === '' || name !== name.trim()))
    throw new Error('--approver must be a principal name without surrounding spaces')
  const corsOrigins = [...new Set(values['cors-origin'] ?? [])]
  if (corsOrigins.length > 0) {
    try {
      checkCorsOptions({ origins: corsOrigins })
    } catch (error) {
      throw new Error(error instanceof Error ? error.message.replace(/^cors\.origins/, '--cors-origin') : String(error))
    }
  }
  if (values.agent !== undefined && values.model !== undefined)
    throw new Error('--agent brings its own model: leave out --model')
  if (values.agent !== undefined && values.agent.trim() === '') throw new Error('--agent needs a module path')
  const port = positiveNumber('--port', values.port ?? '8787', true)
  if (!Number.isInteger(port) || port > 65535) throw new Error('--port must be an integer between 0 and 65535')
  const logLevel = values['log-level'] ?? env[LOG_LEVEL_ENV] ?? 'info'
  if (!isLogLevel(logLevel))
    throw new Error(`--log-level (or ${LOG_LEVEL_ENV}) must be one of ${LOG_LEVELS.join(', ')}`)
  const metricsPort =
    values['metrics-port'] === undefined ? undefined : positiveNumber('--metrics-port', values['metrics-port'], true)
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort > 65535))
    throw new Error('--metrics-port must be an integer between 0 and 65535')
  if (values['metrics-host'] !== undefined && metricsPort === undefined)
    throw new Error('--metrics-host needs --metrics-port')
  const metricsPrincipals = [...new Set(values['metrics-principal'] ?? [])]
  if (metricsPrincipals.some((name) => name.trim() === '' || name !== name.trim()))
    throw new Error('--metrics-principal must be a principal name without surrounding spaces')
  const openai: Record<string, number> = {}
  for (const [flag, key] of Object.entries(MODEL_FLAGS)) {
    const text = values[flag as keyof typeof MODEL_FLAGS]
    if (text === undefined) continue
    if (model !== 'openai') throw new Error(`--${flag} needs --model openai`)
    openai[key] = nonNegativeInteger(`--${flag}`, text, true)
  }
  const dbPool: { max?: number; admissionMax?: number } = {}
  for (const [flag, key] of [
    ['db-pool', 'max'],
    ['db-admission-pool', 'admissionMax'],
  ] as const) {
    const text = values[flag]
    if (text === undefined) continue
    if (!postgres) throw new Error(`--${flag} needs a postgres:// --db`)
    dbPool[key] = nonNegativeInteger(`--${flag}`, text, false)
  }
  const workers = Number(values.workers ?? '1')
  if (!Number.isInteger(workers) || workers < 1 || workers > 64 || values.workers?.trim() === '')
    throw new Error('--workers must be an integer between 1 and 64')
  // Each worker is a replica: an exclusive SQLite file has room for one process only.
  if (workers > 1 && !postgres && values.shared !== true)
    throw new Error('--workers needs a postgres:// --db or --shared (several processes on one SQLite file)')
  // Every worker has its own counters: a shared metrics port would answer for whichever worker took the scrape.
  if (workers > 1 && metricsPort !== undefined)
    throw new Error('--metrics-port serves one process: leave it out with --workers (or run one process per port)')
  const optionalCount = (flag: 'max-tool-argument-bytes' | 'max-tokens-per-thread' | 'max-tokens-per-principal') =>
    values[flag] === undefined ? undefined : nonNegativeInteger(`--${flag}`, values[flag], false)
  const maxTokensPerThread = optionalCount('max-tokens-per-thread')
  const maxTokensPerPrincipal = optionalCount('max-tokens-per-principal')
  return {
    port,
    host: values.host ?? '127.0.0.1',
    db,
    dbSchema: values['db-schema'],
    exclusive: !postgres && values.shared !== true,
    workers,
    dbPool,
    runLeaseMs:
      values['run-lease-ms'] === undefined
        ? undefined
        : positiveNumber('--run-lease-ms', values['run-lease-ms'], false),
    pollMs: values['poll-ms'] === undefined ? undefined : positiveNumber('--poll-ms', values['poll-ms'], false),
    model,
    interruptTtlSeconds: positiveNumber('--interrupt-ttl', values['interrupt-ttl'] ?? '3600', false),
    onExpiry,
    tokens,
    staticDir: values.static,
    pacingMs: positiveNumber('--pacing-ms', values['pacing-ms'] ?? '25', true),
    basePath: values['base-path'] ?? '/api/agent',
    approvers,
    webhooks: webhookUrls(values.webhook ?? [], env),
    corsOrigins,
    agentModule: values.agent,
    logLevel,
    metricsPort,
    metricsHost: values['metrics-host'] ?? '127.0.0.1',
    metricsPrincipals,
    shutdownGraceMs:
      values['shutdown-grace-ms'] === undefined
        ? undefined
        : positiveNumber('--shutdown-grace-ms', values['shutdown-grace-ms'], true),
    limits: limitFlags(values, values['no-quotas'] === true),
    admissionTurns: values['no-admission-turns'] !== true,
    sessionMaxAgeSeconds: sessionMaxAge === undefined ? undefined : Number(sessionMaxAge),
    secureCookies: values['secure-cookies'] === true ? true : 'auto',
    trustProxy: values['trust-proxy'] === true,
    tokensOnCommandLine: (values.token ?? []).length > 0,
    openai: openai as CliOpenAIOptions,
    maxToolArgumentBytes: optionalCount('max-tool-argument-bytes'),
    usage: {
      ...(maxTokensPerThread !== undefined ? { maxTokensPerThread } : {}),
      ...(maxTokensPerPrincipal !== undefined ? { maxTokensPerPrincipal } : {}),
    },
  }
}
