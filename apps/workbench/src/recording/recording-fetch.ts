import { createParser } from 'eventsource-parser'
import type { Json, RequestEndOutcome, RequestPurpose } from './recording-types.ts'
import type { Recorder } from './recorder.ts'
import { toJson, toRecordedError } from './to-json.ts'

/**
 * A `fetch` for the SDK that records every request of the live session: its start (with a
 * summary of the input), the response head (and the `{ error }` envelope of an admission error),
 * every SSE event as it arrives (the chunk's receive time) and how the body ended. The response
 * the SDK reads is a pass-through of the original bytes; cancelling it cancels the original body.
 */
export function createRecordingFetch(
  recorder: Recorder,
  baseFetch: typeof fetch = (...args) => globalThis.fetch(...args),
): typeof fetch {
  return async function recordingFetch(input, init) {
    const request = describe(input, init)
    const requestId = recorder.nextRequestId()
    recorder.add({
      kind: 'request-start',
      requestId,
      method: request.method,
      path: request.path,
      purpose: request.purpose,
      ...(request.input === undefined ? {} : { input: request.input }),
    })

    let response: Response
    try {
      response = await baseFetch(input, init)
    } catch (error) {
      const aborted = isAbort(error) || init?.signal?.aborted === true
      recorder.add({
        kind: 'request-end',
        requestId,
        outcome: aborted ? 'aborted' : 'network-error',
        eventCount: 0,
        error: toRecordedError(error),
      })
      throw error
    }

    const contentType = response.headers.get('content-type')
    if (!response.ok) {
      const envelope = await readEnvelope(response)
      recorder.add({
        kind: 'request-response',
        requestId,
        status: response.status,
        ok: false,
        contentType,
        ...(envelope === undefined ? {} : { error: envelope }),
      })
      recorder.add({
        kind: 'request-end',
        requestId,
        outcome: 'http-error',
        eventCount: 0,
        ...(envelope === undefined ? {} : { error: envelope }),
      })
      return response
    }
    recorder.add({ kind: 'request-response', requestId, status: response.status, ok: true, contentType })
    if (response.body === null || !(contentType ?? '').includes('text/event-stream')) {
      recorder.add({ kind: 'request-end', requestId, outcome: 'complete', eventCount: 0 })
      return response
    }
    const body = recordSse(response.body, recorder, requestId, init?.signal ?? undefined)
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

function recordSse(
  source: ReadableStream<Uint8Array>,
  recorder: Recorder,
  requestId: string,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  const decoder = new TextDecoder()
  let eventCount = 0
  let ended = false
  // The last event was terminal: a cancel now is the client closing a finished stream, not an abort.
  let lastWasTerminal = false
  const end = (outcome: RequestEndOutcome, error?: unknown) => {
    if (ended) return
    ended = true
    recorder.add({
      kind: 'request-end',
      requestId,
      outcome,
      eventCount,
      ...(error === undefined ? {} : { error: toRecordedError(error) }),
    })
  }
  const parser = createParser({
    onEvent(message) {
      let event: Json
      try {
        event = JSON.parse(message.data) as Json
      } catch {
        event = message.data // kept as text: a malformed frame is an observation too
      }
      eventCount++
      const type =
        typeof event === 'object' && event !== null && !Array.isArray(event)
          ? (event as { type?: unknown }).type
          : undefined
      lastWasTerminal = type === 'RUN_FINISHED' || type === 'RUN_ERROR'
      recorder.add({ kind: 'sse-event', requestId, sseId: message.id ?? null, event })
    },
  })
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          parser.feed(decoder.decode())
          end('complete')
          controller.close()
          return
        }
        parser.feed(decoder.decode(value, { stream: true }))
        controller.enqueue(value)
      } catch (error) {
        end(isAbort(error) || signal?.aborted === true ? 'aborted' : 'stream-error', error)
        controller.error(error)
      }
    },
    async cancel(reason) {
      end(lastWasTerminal ? 'complete' : 'aborted')
      await reader.cancel(reason).catch(() => undefined)
    },
  })
}

async function readEnvelope(response: Response) {
  try {
    const body: unknown = await response.clone().json()
    if (typeof body === 'object' && body !== null && 'error' in body)
      return toRecordedError((body as { error: unknown }).error)
  } catch {
    // not JSON: the status alone is the outcome
  }
  return undefined
}

function isAbort(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError'
}

interface RequestDescription {
  readonly method: string
  readonly path: string
  readonly purpose: RequestPurpose
  readonly input: Json | undefined
}

function describe(input: RequestInfo | URL, init: RequestInit | undefined): RequestDescription {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  const method = (init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase()
  const parsed = new URL(url, 'http://workbench.invalid')
  const path = parsed.pathname + parsed.search
  const body = typeof init?.body === 'string' ? safeParse(init.body) : undefined
  return {
    method,
    path,
    purpose: purposeOf(method, parsed.pathname, parsed.searchParams, body),
    input: summarize(body),
  }
}

function purposeOf(method: string, pathname: string, search: URLSearchParams, body: unknown): RequestPurpose {
  if (method === 'POST' && pathname.endsWith('/runs')) {
    return isRecord(body) && Array.isArray(body.resume) && body.resume.length > 0 ? 'resume' : 'run'
  }
  if (method === 'POST' && pathname.endsWith('/cancel')) return 'cancel'
  if (method === 'POST' && /\/threads\/[^/]+\/decisions$/.test(pathname)) return 'decisions'
  if (method === 'GET' && /\/threads\/[^/]+\/events$/.test(pathname)) {
    const follow = search.get('follow')
    return follow === '1' || follow === 'true' ? 'follow' : 'events'
  }
  if (method === 'GET' && /\/threads\/[^/]+$/.test(pathname)) return 'thread'
  if (method === 'GET' && pathname.endsWith('/threads') && search.has('status')) return 'inbox'
  return 'other'
}

/** The run input without its history (the snapshots carry the messages). */
function summarize(body: unknown): Json | undefined {
  if (!isRecord(body)) return undefined
  const messages = Array.isArray(body.messages) ? body.messages : []
  const last = messages[messages.length - 1]
  const summary: Record<string, Json> = {}
  for (const key of ['threadId', 'runId', 'parentRunId'] as const) {
    if (typeof body[key] === 'string') summary[key] = body[key]
  }
  summary.messageCount = messages.length
  if (isRecord(last)) summary.lastMessage = toJson({ id: last.id, role: last.role, content: last.content })
  if (Array.isArray(body.resume)) summary.resume = toJson(body.resume)
  if (Array.isArray(body.tools)) summary.toolCount = body.tools.length
  return summary
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
