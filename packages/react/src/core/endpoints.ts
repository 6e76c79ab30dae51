/** What an endpoint function receives. `runId` is absent for thread-level endpoints (events, snapshot). */
export interface EndpointParams {
  readonly threadId: string
  readonly runId: string | undefined
}

/**
 * One endpoint: a URL (absolute, or a path) used as given, in which `{threadId}` and `{runId}` are
 * replaced (URL-encoded), or a function of `{ threadId, runId }` read before every request.
 */
export type Endpoint = string | ((params: EndpointParams) => string)

/**
 * Where the HTTP transport sends each request (docs/client-contract.md#endpoints). Every endpoint
 * defaults to Interlude's route under the base URL (`api`).
 */
export interface Endpoints {
  /** `POST` a `RunAgentInput`, answered with SSE. @default `{api}/runs` */
  readonly run?: Endpoint
  /** `GET` the thread's events after `Last-Event-ID` (reconnect after a drop). @default `{api}/threads/{threadId}/events` */
  readonly events?: Endpoint
  /** `GET` the thread snapshot (`recover()`). @default `{api}/threads/{threadId}` */
  readonly snapshot?: Endpoint
  /** `POST` an explicit cancel (`stop()` after acknowledgement). @default `{api}/threads/{threadId}/runs/{runId}/cancel` */
  readonly cancel?: Endpoint
  /** `GET` a live run's events from the thread log (attach after `recover()`, join after `ALREADY_RESUMED`). @default `events` */
  readonly follow?: Endpoint
}

export type EndpointName = keyof Endpoints

const DEFAULT_PATHS: Record<Exclude<EndpointName, 'follow'>, string> = {
  run: '/runs',
  events: '/threads/{threadId}/events',
  snapshot: '/threads/{threadId}',
  cancel: '/threads/{threadId}/runs/{runId}/cancel',
}

/** The URL of one endpoint: the configured one, else Interlude's default under `base`. */
export function endpointUrl(
  endpoints: Endpoints | undefined,
  name: EndpointName,
  base: string,
  params: EndpointParams,
): string {
  const chosen = endpoints?.[name] ?? (name === 'follow' ? endpoints?.events : undefined)
  if (typeof chosen === 'function') return chosen(params)
  const template = chosen ?? `${base}${DEFAULT_PATHS[name === 'follow' ? 'events' : name]}`
  return template
    .replaceAll('{threadId}', encodeURIComponent(params.threadId))
    .replaceAll('{runId}', encodeURIComponent(params.runId ?? ''))
}
