import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ErrorCode, Interrupt } from '@interlude/protocol'
import type { JsonAnswer } from '../test-utils/decisions.ts'
import { getJson, overHttp, postDecision, readJson } from '../test-utils/decisions.ts'
import type { TestServer } from '../test-utils/harness.ts'
import {
  dumpStore,
  interruptsOf,
  newThreadId,
  postRun,
  runInput,
  startTestServer,
  userMessage,
} from '../test-utils/harness.ts'
import { resolved } from '../test-utils/resume-entries.ts'

/** The decider on eng's threads (threads are per owner: `?owner=`, docs/protocol.md#thread-ids). */
const MGR = { principal: 'mgr', owner: 'eng' } as const

/**
 * Bad input on the approvals routes (docs/approvals.md, docs/protocol.md): every malformed request is a typed 4xx
 * with the JSON envelope, and not one row of the store changes — the rules of `POST /runs`, on a real socket.
 */
let server: TestServer
let threadId: string
let interrupts: Interrupt[]
const http = () => overHttp(server)

beforeAll(async () => {
  server = await startTestServer({
    approvers: ['mgr'],
    limits: { maxBodyBytes: 16 * 1024, maxPayloadBytes: 512, maxInterruptsPerBatch: 3, maxJsonDepth: 8 },
  })
  threadId = newThreadId()
  const first = await postRun(server, runInput(threadId, [userMessage('deploy v5 to staging')]), { principal: 'eng' })
  interrupts = interruptsOf(first.events)
  expect(interrupts).toHaveLength(2)
})
afterAll(async () => {
  await server.dispose()
})

/** Sends, and checks the answer is a JSON envelope with `code` and that the store is byte for byte the same. */
async function refused(send: () => Promise<JsonAnswer>, status: number, code: ErrorCode): Promise<JsonAnswer> {
  const before = dumpStore(server.dbPath)
  const answer = await send()
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  expect({ status: answer.status, code: answer.error?.code }).toEqual({ status, code })
  expect(dumpStore(server.dbPath)).toEqual(before)
  return answer
}

const valid = () => ({ runId: `run_${randomUUID()}`, resume: interrupts.map((i) => resolved(i)) })

describe('POST {base}/threads/:threadId/decisions refuses bad input, changing nothing', () => {
  const cases: [string, () => Promise<JsonAnswer>, number, ErrorCode][] = [
    [
      'no credentials',
      () =>
        http()
          .request(`/threads/${threadId}/decisions`, {
            method: 'POST',
            principal: null,
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(valid()),
          })
          .then(readJson),
      401,
      'UNAUTHENTICATED',
    ],
    ['a body that is not JSON', () => postDecision(http(), threadId, '{"runId":', MGR), 400, 'INVALID_INPUT'],
    ['an empty body', () => postDecision(http(), threadId, '', MGR), 400, 'INVALID_INPUT'],
    ['a JSON array', () => postDecision(http(), threadId, '[]', MGR), 400, 'INVALID_INPUT'],
    [
      'text/plain',
      () => postDecision(http(), threadId, JSON.stringify(valid()), MGR, { 'Content-Type': 'text/plain' }),
      400,
      'INVALID_INPUT',
    ],
    [
      'a form content type',
      () => postDecision(http(), threadId, 'runId=x', MGR, { 'Content-Type': 'application/x-www-form-urlencoded' }),
      400,
      'INVALID_INPUT',
    ],
    [
      'an unknown field',
      () => postDecision(http(), threadId, JSON.stringify({ ...valid(), threadId }), MGR),
      400,
      'INVALID_INPUT',
    ],
    [
      'no runId',
      () => postDecision(http(), threadId, JSON.stringify({ resume: valid().resume }), MGR),
      400,
      'INVALID_INPUT',
    ],
    [
      'a runId with a space',
      () => postDecision(http(), threadId, { ...valid(), runId: 'run 1' }, MGR),
      400,
      'INVALID_INPUT',
    ],
    [
      'a runId over 200 characters',
      () => postDecision(http(), threadId, { ...valid(), runId: 'r'.repeat(201) }, MGR),
      400,
      'INVALID_INPUT',
    ],
    ['a threadId with a space in the path', () => postDecision(http(), 'thread 1', valid(), MGR), 400, 'INVALID_INPUT'],
    ['no entries', () => postDecision(http(), threadId, { ...valid(), resume: [] }, MGR), 400, 'INVALID_INPUT'],
    [
      'an entry without a status',
      () =>
        postDecision(
          http(),
          threadId,
          JSON.stringify({ ...valid(), resume: [{ interruptId: interrupts[0]!.id }] }),
          MGR,
        ),
      400,
      'INVALID_INPUT',
    ],
    [
      'a cancelled entry with a payload',
      () =>
        postDecision(
          http(),
          threadId,
          {
            ...valid(),
            resume: [{ interruptId: interrupts[0]!.id, status: 'cancelled', payload: {} }, resolved(interrupts[1]!)],
          },
          MGR,
        ),
      400,
      'INVALID_INPUT',
    ],
    [
      'more entries than maxInterruptsPerBatch',
      () =>
        postDecision(
          http(),
          threadId,
          { ...valid(), resume: [0, 1, 2, 3].map((n) => ({ interruptId: `int_${n}`, status: 'cancelled' as const })) },
          MGR,
        ),
      400,
      'INVALID_INPUT',
    ],
    [
      'a payload over maxPayloadBytes',
      () =>
        postDecision(
          http(),
          threadId,
          {
            ...valid(),
            resume: [resolved(interrupts[0]!, { approved: true, reason: 'x'.repeat(600) }), resolved(interrupts[1]!)],
          },
          MGR,
        ),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'JSON nested deeper than maxJsonDepth',
      () =>
        postDecision(
          http(),
          threadId,
          JSON.stringify({
            ...valid(),
            resume: [resolved(interrupts[0]!, { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } })],
          }),
          MGR,
        ),
      400,
      'INVALID_INPUT',
    ],
    [
      'a payload that breaks the responseSchema',
      () =>
        postDecision(
          http(),
          threadId,
          { ...valid(), resume: [resolved(interrupts[0]!, { approved: 'yes' }), resolved(interrupts[1]!)] },
          MGR,
        ),
      422,
      'RESUME_PAYLOAD_INVALID',
    ],
    [
      'half the batch',
      () => postDecision(http(), threadId, { ...valid(), resume: [resolved(interrupts[0]!)] }, MGR),
      422,
      'RESUME_INCOMPLETE',
    ],
    [
      'an unknown interrupt',
      () =>
        postDecision(
          http(),
          threadId,
          { ...valid(), resume: [...valid().resume, { interruptId: 'int_nope', status: 'cancelled' }] },
          MGR,
        ),
      422,
      'RESUME_UNKNOWN_INTERRUPT',
    ],
    ['a thread that does not exist', () => postDecision(http(), newThreadId(), valid(), MGR), 404, 'THREAD_NOT_FOUND'],
    ['a principal who may not decide', () => postDecision(http(), threadId, valid(), 'bob'), 404, 'THREAD_NOT_FOUND'],
  ]
  for (const [name, send, status, code] of cases) {
    it(`${name} → ${status} ${code}`, async () => {
      await refused(send, status, code)
    })
  }

  it('an oversized body → 413 PAYLOAD_TOO_LARGE with Connection: close, nothing changed', async () => {
    const body = JSON.stringify({
      ...valid(),
      resume: [resolved(interrupts[0]!, { approved: true, reason: 'x'.repeat(20_000) })],
    })
    const answer = await refused(() => postDecision(http(), threadId, body, MGR), 413, 'PAYLOAD_TOO_LARGE')
    expect(answer.headers.get('connection')).toBe('close')
  })
})

describe('GET routes of the approvals refuse bad input', () => {
  const cases: [string, string, number, ErrorCode][] = [
    ['run view: a threadId with a space', '/threads/a%20b/runs/r1', 400, 'INVALID_INPUT'],
    ['run view: a runId with a space', `/threads/THREAD/runs/r%201`, 400, 'INVALID_INPUT'],
    ['run view: an unknown run', `/threads/THREAD/runs/run_nope`, 404, 'RUN_NOT_FOUND'],
    ['run view: an unknown thread', `/threads/thread_nope/runs/run_nope`, 404, 'THREAD_NOT_FOUND'],
    ['events: follow=yes', '/threads/THREAD/events?follow=yes', 400, 'INVALID_INPUT'],
    ['events: follow with a bad cursor', '/threads/THREAD/events?follow=1&after=-1', 400, 'INVALID_INPUT'],
    [
      'events: follow of a thread the caller may not read',
      '/threads/thread_nope/events?follow=1',
      404,
      'THREAD_NOT_FOUND',
    ],
    ['snapshot: an owner with a control character', '/threads/THREAD?owner=%1Feng', 400, 'INVALID_INPUT'],
    ['snapshot: an empty owner', '/threads/THREAD?owner=', 400, 'INVALID_INPUT'],
    ['inbox: another status', '/interrupts?status=decided', 400, 'INVALID_INPUT'],
    ['inbox: an empty status', '/interrupts?status=', 400, 'INVALID_INPUT'],
    ['inbox: limit 0', '/interrupts?limit=0', 400, 'INVALID_INPUT'],
    ['inbox: limit 101', '/interrupts?limit=101', 400, 'INVALID_INPUT'],
    ['inbox: limit not a number', '/interrupts?limit=ten', 400, 'INVALID_INPUT'],
    ['inbox: an empty limit', '/interrupts?limit=', 400, 'INVALID_INPUT'],
    ['inbox: a cursor that is not base64url JSON', '/interrupts?cursor=%21%21%21', 400, 'INVALID_INPUT'],
    [
      'inbox: a cursor of the wrong shape',
      `/interrupts?cursor=${Buffer.from('{"a":1}').toString('base64url')}`,
      400,
      'INVALID_INPUT',
    ],
    [
      'inbox: a thread-list cursor',
      `/interrupts?cursor=${Buffer.from('[-1,"t"]').toString('base64url')}`,
      400,
      'INVALID_INPUT',
    ],
  ]
  for (const [name, path, status, code] of cases) {
    it(`${name} → ${status} ${code}`, async () => {
      // The decider names the owner of the thread (threads are per owner, docs/protocol.md#thread-ids).
      const addressed = path.replace('THREAD', threadId)
      const withOwner = `${addressed}${addressed.includes('?') ? '&' : '?'}owner=eng`
      await refused(() => getJson(http(), withOwner, 'mgr'), status, code)
    })
  }

  it('no credentials → 401 on every new route', async () => {
    for (const path of ['/interrupts', `/threads/${threadId}/runs/r1`]) {
      await refused(() => http().request(path, { principal: null }).then(readJson), 401, 'UNAUTHENTICATED')
    }
  })
})
