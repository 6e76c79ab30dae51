/**
 * The approvals server kit of the React server tests (use-chat.approvals*.server.test.tsx): agent servers on 127.0.0.1
 * with SQLite in a temp dir, closed after the file; hooks mounted inside <StrictMode>; the decisions API; a fetch that
 * holds requests back. Importing it registers the file's cleanup hooks.
 */
import { startServer, type RunningServer, type StartServerOptions } from '@interlude/agent-server'
import type { Interrupt, Message, ResumeEntry, ThreadSnapshot } from '@interlude/protocol'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StrictMode, type ReactNode } from 'react'
import { afterAll, afterEach, expect } from 'vitest'
import { useChat, type UseChatOptions, type UseChatResult } from '../use-chat.ts'

export const TOKENS = { eng: 'eng-token', mgr: 'mgr-token' }
const dirs: string[] = []
const servers: RunningServer[] = []
afterEach(cleanup)
afterAll(async () => {
  for (const s of servers.splice(0)) await s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

export async function serve(options: Partial<StartServerOptions> = {}): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'interlude-react-approvals-'))
  dirs.push(dir)
  const s = await startServer({ dbPath: join(dir, 'agent.db'), tokens: TOKENS, approvers: ['mgr'], ...options })
  servers.push(s)
  return s
}

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>
let seq = 0
export const newThread = () => `approvals-${process.pid}-${++seq}`
export const auth = (who: keyof typeof TOKENS) => ({ Authorization: `Bearer ${TOKENS[who]}` })

export function mount(server: RunningServer, options: UseChatOptions & { threadId: string }) {
  const base: UseChatOptions = { api: server.baseUrl, headers: auth('eng'), throttleMs: 0 }
  return renderHook((props: UseChatOptions) => useChat({ ...base, ...props }), {
    wrapper: strict,
    initialProps: options,
  })
}

export const textOf = (messages: readonly Message[]) =>
  messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n')
export const count = (text: string, part: string) => text.split(part).length - 1

export async function pause(result: { current: UseChatResult }, text = 'deploy v2.1 to staging') {
  act(() => void result.current.sendMessage(text))
  await waitFor(() => expect(result.current.pendingInterrupts).toBeDefined())
  return result.current.pendingInterrupts!
}

export const answers = (interrupts: readonly Interrupt[], approved: boolean): ResumeEntry[] =>
  interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved } }))

/** The decisions API (another principal, a bot): `POST …/decisions`. */
export async function decideViaApi(
  server: RunningServer,
  threadId: string,
  resume: ResumeEntry[],
  who: 'mgr' | 'eng' = 'mgr',
) {
  // Threads are per owner: a decider names eng's thread with ?owner= (docs/protocol.md#thread-ids).
  const res = await fetch(`${server.baseUrl}/threads/${threadId}/decisions?owner=eng`, {
    method: 'POST',
    headers: { ...auth(who), 'Content-Type': 'application/json' },
    body: JSON.stringify({ runId: `api-${threadId}-${++seq}`, resume }),
  })
  expect(res.status).toBe(202)
}

export async function serverSnapshot(server: RunningServer, threadId: string): Promise<ThreadSnapshot> {
  return (await (
    await fetch(`${server.baseUrl}/threads/${threadId}`, { headers: auth('eng') })
  ).json()) as ThreadSnapshot
}

/** A fetch that holds back the requests `hold` selects until `release()`; an abort still ends them. */
export function gatedFetch(hold: (url: string, init: RequestInit | undefined) => boolean) {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const urls: string[] = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const url = String(input)
    urls.push(`${init?.method ?? 'GET'} ${url}`)
    if (hold(url, init)) {
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve)
        init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true })
      })
    }
    return globalThis.fetch(input, init)
  }
  return { fetch: fetchImpl, release: () => release(), urls }
}
