import { pino } from 'pino'
import type { DestinationStream, Logger as PinoLogger } from 'pino'

/**
 * Structured logs (README, "Logs and metrics"): pino writes one JSON object per line. Every value is JSON-escaped,
 * so client text (a path with `%0A`, an id, an error message) can never start a line of its own.
 */
export type Logger = PinoLogger

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** The environment variable of the default level (the CLI's `--log-level` wins over it). */
export const LOG_LEVEL_ENV = 'INTERLUDE_LOG_LEVEL'

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value)
}

/** `INTERLUDE_LOG_LEVEL`, else `silent` under a test runner (vitest sets `VITEST`), else `info`. */
export function defaultLogLevel(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel {
  const fromEnv = env[LOG_LEVEL_ENV]
  if (isLogLevel(fromEnv)) return fromEnv
  return env.VITEST !== undefined ? 'silent' : 'info'
}

export interface LoggerOptions {
  /** @default defaultLogLevel() */
  readonly level?: LogLevel | undefined
  /** Where lines go. @default stdout, written synchronously (a crash loses no line) */
  readonly destination?: DestinationStream
}

/** A JSON-lines logger: `{"level":"info","time":"…Z","pid":…,"event":"…","msg":"…",…}`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? defaultLogLevel(),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  )
}

/** The `logError(message, error)` callback the server's parts take, as an `error` line with `err`. */
export function logErrorTo(logger: Logger): (message: string, error: unknown) => void {
  return (message, error) => logger.error({ event: 'error', err: error }, message)
}
