import { parseArgs } from 'node:util'
import type { ExpiryPolicy } from '@interlude/protocol'
import { EXPIRY_POLICIES, isExpiryPolicy } from './agent/expiry-options.ts'
import type { Limits } from './core/limits.ts'
import { resolveWebhookEndpoints, WEBHOOK_SECRET_ENV } from './webhooks/webhook-config.ts'
import { checkCorsOptions } from './http/middleware/cors.ts'
import { isLogLevel, LOG_LEVEL_ENV, LOG_LEVELS } from './observability/logger.ts'
import type { LogLevel } from './observability/logger.ts'
export const USAGE = `Usage: interlude-server [options]

  --port <n>            port to listen on (default 8787; 0 = any free port)
  --host <host>         interface to bind (default 127.0.0.1)
  --db <path | url>     SQLite file, created on first start (default .data/interlude.db), or a
                        postgres://user:pass@host:port/db URL (PostgreSQL, several replicas)
  --db-schema <name>    PostgreSQL schema of the tables (default: interlude)
  --shared              several server processes share this SQLite file (default for PostgreSQL):
                        runs left running are closed once their lease ends, not all at startup
  --run-lease-ms <ms>   lease of a running run, renewed by its process (default 15000)
  --poll-ms <ms>        log poll for live tails of runs in other processes (default 250; 1000
                        with PostgreSQL, which also uses LISTEN/NOTIFY)
  --model <name>        scripted | openai (default scripted; openai reads OPENAI_API_KEY,
                        OPENAI_BASE_URL, OPENAI_MODEL)
  --interrupt-ttl <s>   seconds before an interrupt batch expires (default 3600)
  --on-expiry <policy>  deny | cancel | keep: what an expired batch gets, for tools that set no
                        onExpiry (default: deny for approvals, cancel for questions)
  --token <name=secret> bearer token for principal <name>; repeatable. Without tokens,
                        signed anonymous-session cookies are used.
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
  -h, --help            show this help
`

export interface CliOptions {
  readonly port: number
  readonly host: string
  readonly db: string
  readonly dbSchema: string | undefined
  /** `false` with --shared or a PostgreSQL URL. */
  readonly exclusive: boolean
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
  /** `--cors-origin`, checked like `AgentServerOptions.cors`. */
  readonly corsOrigins: readonly string[]
  /** `--agent`: a module whose default export is the agent (loaded by the CLI). */
  readonly agentModule: string | undefined
  /** `--log-level`, else `INTERLUDE_LOG_LEVEL`, else `info`. */
  readonly logLevel: LogLevel
  readonly metricsPort: number | undefined
  readonly metricsHost: string
  readonly metricsPrincipals: readonly string[]
  /** `--thread-max-*`, `--model-window-*` (issue 12.4): only the flags given. */
  readonly limits: Partial<Limits>
}

/** The history bounds of the command line (docs/protocol.md#limits), each a positive integer. */
const LIMIT_FLAGS = {
  'thread-max-messages': 'threadMaxMessages',
  'thread-max-bytes': 'threadMaxBytes',
  'model-window-messages': 'modelWindowMessages',
  'model-window-bytes': 'modelWindowBytes',
} as const

function limitFlags(values: Partial<Record<keyof typeof LIMIT_FLAGS, string>>): Partial<Limits> {
  const limits: Partial<Record<keyof Limits, number>> = {}
  for (const [flag, key] of Object.entries(LIMIT_FLAGS) as [keyof typeof LIMIT_FLAGS, keyof Limits][]) {
    const text = values[flag]
    if (text === undefined) continue
    const n = positiveNumber(`--${flag}`, text, false)
    if (!Number.isSafeInteger(n)) throw new Error(`--${flag} must be a positive integer`)
    limits[key] = n
  }
  return limits
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
      'thread-max-messages': { type: 'string' },
      'thread-max-bytes': { type: 'string' },
      'model-window-messages': { type: 'string' },
      'model-window-bytes': { type: 'string' },
      'shutdown-grace-ms': { type: 'string' },
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
  let tokens: Record<string, string> | undefined
  for (const spec of values.token ?? []) {
    const eq = spec.indexOf('=')
    if (eq <= 0 || eq === spec.length - 1) throw new Error(`--token must look like name=secret (got "${spec}")`)
    tokens ??= {}
    tokens[spec.slice(0, eq)] = spec.slice(eq + 1)
  }
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
  return {
    port,
    host: values.host ?? '127.0.0.1',
    db,
    dbSchema: values['db-schema'],
    exclusive: !postgres && values.shared !== true,
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
    limits: limitFlags(values),
    shutdownGraceMs:
      values['shutdown-grace-ms'] === undefined
        ? undefined
        : positiveNumber('--shutdown-grace-ms', values['shutdown-grace-ms'], true),
  }
}
