import fs from 'node:fs'
import { tokensProblem } from './auth/authenticate.ts'
import { SESSION_SECRET_ENV } from './auth/session-secret.ts'
import { addToken, parseTokenEntries, TOKENS_ENV } from './auth/token-sources.ts'
import { givenFlags, groupValues, readFlags, usageText } from './cli-flag-kit.ts'
import { FLAGS } from './cli-flags.ts'
import { principalGroups } from './cli-groups.ts'
import { slackFlags } from './cli-slack.ts'
import { checkCorsOptions } from './config/cors-options.ts'
import { SERVER_DEFAULTS } from './config/defaults.ts'
import type { Limits } from './config/limits.ts'
import { NO_PRINCIPAL_QUOTAS } from './config/limits.ts'
import type { StartServerOptions } from './server.ts'
import { resolveWebhookEndpoints, WEBHOOK_SECRET_ENV } from './webhooks/webhook-config.ts'

/** `interlude-server --help`: every flag with its default, from the flag table (cli-flags.ts). */
export const USAGE = usageText('interlude-server', FLAGS)

/** The options `startServer` takes under the same name, as the flags set them (`undefined`: its default). */
type Forwarded =
  | 'port'
  | 'host'
  | 'dbSchema'
  | 'dbPool'
  | 'exclusive'
  | 'runLeaseMs'
  | 'pollMs'
  | 'model'
  | 'interruptTtlSeconds'
  | 'onExpiry'
  | 'multitask'
  | 'tokens'
  | 'staticDir'
  | 'pacingMs'
  | 'basePath'
  | 'approvers'
  | 'oncall'
  | 'groups'
  | 'productionQuorum'
  | 'shutdownGraceMs'
  | 'logLevel'
  | 'metricsPort'
  | 'metricsHost'
  | 'metricsPrincipals'
  | 'limits'
  | 'sessionMaxAgeSeconds'
  | 'secureCookies'
  | 'trustProxy'
  | 'openai'
  | 'usage'
  | 'publicUrl'
  | 'slack'

/** The parsed command line: `startServer` options (`Forwarded`), plus what only the CLI reads. */
export type CliOptions = { readonly [K in Forwarded]-?: StartServerOptions[K] } & {
  /** `--db`: a SQLite file or a `postgres://` URL. */
  readonly db: string
  /** `--workers`: server processes sharing the port (1: this process serves). */
  readonly workers: number
  /** `--webhook` URLs (signed with `INTERLUDE_WEBHOOK_SECRET`). */
  readonly webhooks: readonly string[]
  /** `--no-admission-turns` gives `false`: every admission runs as soon as its request is read (for comparisons). */
  readonly admissionTurns: boolean
  /** `--cors-origin`, checked like `ServerOptions.cors`. */
  readonly corsOrigins: readonly string[]
  /** `--agent`: a module whose default export is the agent (loaded by the CLI). */
  readonly agentModule: string | undefined
  /** Where the tokens came from, for the startup warning about `--token` in `ps`. */
  readonly tokensOnCommandLine: boolean
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

/** A list of principal names, each once, none blank or padded. */
function principals(names: readonly string[], flag: string): string[] {
  const unique = [...new Set(names)]
  if (unique.some((name) => name.trim() === '' || name !== name.trim()))
    throw new Error(`${flag} must be a principal name without surrounding spaces`)
  return unique
}

/**
 * Parses argv (without node and script) into options; throws with a message on bad flags. Each flag's own value is
 * checked by `readFlags` (from the flag table); the rules across flags are here.
 */
export function parseCliArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): CliOptions | 'help' {
  const v = readFlags(FLAGS, argv, env)
  if (v.help) return 'help'
  const postgres = /^postgres(ql)?:\/\//i.test(v.db)
  if (v['db-schema'] !== undefined && !postgres) throw new Error('--db-schema needs a postgres:// --db URL')
  if (v['db-schema'] !== undefined && !/^[A-Za-z_][\w$]{0,62}$/.test(v['db-schema']))
    throw new Error('--db-schema must be a plain identifier')
  const tokens = collectTokens(v.token, v['tokens-file'], env)
  if (postgres && tokens === undefined && !env[SESSION_SECRET_ENV])
    throw new Error(
      `--db postgres://… without tokens needs ${SESSION_SECRET_ENV} (one session secret for every replica), or --tokens-file`,
    )
  const corsOrigins = [...new Set(v['cors-origin'])]
  if (corsOrigins.length > 0) {
    try {
      checkCorsOptions({ origins: corsOrigins })
    } catch (error) {
      throw new Error(error instanceof Error ? error.message.replace(/^cors\.origins/, '--cors-origin') : String(error))
    }
  }
  if (v.agent !== undefined && v.model !== undefined) throw new Error('--agent brings its own model: leave out --model')
  if (v.agent !== undefined && v.agent.trim() === '') throw new Error('--agent needs a module path')
  if (v['metrics-host'] !== undefined && v['metrics-port'] === undefined)
    throw new Error('--metrics-host needs --metrics-port')
  // Not silently ignored: the bounds of a model that is not used would only mislead.
  const modelFlag = givenFlags(FLAGS, v, 'openai')[0]
  if (modelFlag !== undefined && v.model !== 'openai') throw new Error(`--${modelFlag} needs --model openai`)
  const poolFlag = givenFlags(FLAGS, v, 'dbPool')[0]
  if (poolFlag !== undefined && !postgres) throw new Error(`--${poolFlag} needs a postgres:// --db`)
  // Each worker is a replica: an exclusive SQLite file has room for one process only.
  if (v.workers > 1 && !postgres && !v.shared)
    throw new Error('--workers needs a postgres:// --db or --shared (several processes on one SQLite file)')
  // Every worker has its own counters: a shared metrics port would answer for whichever worker took the scrape.
  if (v.workers > 1 && v['metrics-port'] !== undefined)
    throw new Error('--metrics-port serves one process: leave it out with --workers (or run one process per port)')
  return {
    port: v.port,
    host: v.host,
    db: v.db,
    dbSchema: v['db-schema'],
    exclusive: !postgres && !v.shared,
    workers: v.workers,
    dbPool: groupValues<NonNullable<StartServerOptions['dbPool']>>(FLAGS, v, 'dbPool'),
    runLeaseMs: v['run-lease-ms'],
    pollMs: v['poll-ms'],
    model: v.model,
    interruptTtlSeconds: v['interrupt-ttl'],
    onExpiry: v['on-expiry'],
    multitask: v.multitask,
    tokens,
    staticDir: v.static,
    pacingMs: v['pacing-ms'],
    basePath: v['base-path'],
    approvers: principals(v.approver, '--approver'),
    groups: principalGroups(v.group),
    productionQuorum: v['production-quorum'],
    oncall: principals(
      v.oncall.flatMap((list) => list.split(',')),
      '--oncall',
    ),
    webhooks: webhookUrls(v.webhook, env),
    publicUrl: v['public-url'],
    slack: slackFlags(v['slack-user-map'], v['slack-webhook'], env),
    corsOrigins,
    agentModule: v.agent,
    logLevel: v['log-level'],
    metricsPort: v['metrics-port'],
    metricsHost: v['metrics-host'],
    metricsPrincipals: principals(v['metrics-principal'], '--metrics-principal'),
    shutdownGraceMs: v['shutdown-grace-ms'],
    limits: { ...(v['no-quotas'] ? NO_PRINCIPAL_QUOTAS : {}), ...groupValues<Limits>(FLAGS, v, 'limits') },
    admissionTurns: !v['no-admission-turns'],
    sessionMaxAgeSeconds: v['session-max-age'],
    secureCookies: v['secure-cookies'] ? true : SERVER_DEFAULTS.secureCookies,
    trustProxy: v['trust-proxy'],
    tokensOnCommandLine: v.token.length > 0,
    openai: groupValues<NonNullable<StartServerOptions['openai']>>(FLAGS, v, 'openai'),
    usage: groupValues<NonNullable<StartServerOptions['usage']>>(FLAGS, v, 'usage'),
  }
}
