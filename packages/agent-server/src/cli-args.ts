import { parseArgs } from 'node:util'
import type { ExpiryPolicy } from '@interlude/protocol'
import { EXPIRY_POLICIES, isExpiryPolicy } from './agent/expiry-options.ts'
import { resolveWebhookEndpoints, WEBHOOK_SECRET_ENV } from './webhooks/webhook-config.ts'
import { checkCorsOptions } from './http/middleware/cors.ts'
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
  /** `--cors-origin`, checked like `AgentServerOptions.cors`. */
  readonly corsOrigins: readonly string[]
  /** `--agent`: a module whose default export is the agent (loaded by the CLI). */
  readonly agentModule: string | undefined
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
  const openai: Record<string, number> = {}
  for (const [flag, key] of Object.entries(MODEL_FLAGS)) {
    const text = values[flag as keyof typeof MODEL_FLAGS]
    if (text === undefined) continue
    if (model !== 'openai') throw new Error(`--${flag} needs --model openai`)
    openai[key] = nonNegativeInteger(`--${flag}`, text, true)
  }
  const optionalCount = (flag: 'max-tool-argument-bytes' | 'max-tokens-per-thread' | 'max-tokens-per-principal') =>
    values[flag] === undefined ? undefined : nonNegativeInteger(`--${flag}`, values[flag], false)
  const maxTokensPerThread = optionalCount('max-tokens-per-thread')
  const maxTokensPerPrincipal = optionalCount('max-tokens-per-principal')
  const port = positiveNumber('--port', values.port ?? '8787', true)
  if (!Number.isInteger(port) || port > 65535) throw new Error('--port must be an integer between 0 and 65535')
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
    openai: openai as CliOpenAIOptions,
    maxToolArgumentBytes: optionalCount('max-tool-argument-bytes'),
    usage: {
      ...(maxTokensPerThread !== undefined ? { maxTokensPerThread } : {}),
      ...(maxTokensPerPrincipal !== undefined ? { maxTokensPerPrincipal } : {}),
    },
  }
}
