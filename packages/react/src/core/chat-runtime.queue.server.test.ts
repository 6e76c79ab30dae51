/**
 * Many messages, one thread (docs/react-runtime.md#many-messages-one-thread) against the real agent server (scripted
 * release assistant with token pacing, SQLite in a temp dir) on 127.0.0.1: messages sent while a run streams are
 * queued on the server, shown in `queued` in order, join the history when their runs start and stream live; a queued
 * run is cancelled; `interrupt` replaces the running run; a reload (a new runtime) shows the queue again.
 */
import { startServer, type RunningServer } from '@interlude/agent-server'
import type { Message } from '@interlude/protocol'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatRuntime } from './chat-runtime.ts'
import type { ChatRuntimeOptions, ChatSnapshot, FinishInfo, QueueStorage } from './types.ts'

const TOKEN = 'alice-token'
let dir: string
let server: RunningServer
let seq = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlude-queue-'))
  // Paced: a run streams for a few hundred ms, long enough to type into.
  server = await startServer({ dbPath: join(dir, 'agent.db'), tokens: { alice: TOKEN }, pacingMs: 25 })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

function memoryStorage(): QueueStorage & { readonly items: Map<string, string> } {
  const items = new Map<string, string>()
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  }
}

function runtime(options: ChatRuntimeOptions = {}) {
  const finishes: FinishInfo[] = []
  const rt = new ChatRuntime({
    api: server.baseUrl,
    headers: { Authorization: `Bearer ${TOKEN}` },
    throttleMs: 0,
    threadId: `queue-${process.pid}-${++seq}`,
    queueStorage: false,
    onFinish: (info) => finishes.push(info),
    ...options,
  })
  return { rt, finishes }
}

function until(rt: ChatRuntime, predicate: (s: ChatSnapshot) => boolean): Promise<ChatSnapshot> {
  return new Promise((resolve) => {
    const check = () => {
      const s = rt.getSnapshot()
      if (!predicate(s)) return false
      stop()
      resolve(s)
      return true
    }
    const stop = rt.subscribe(check)
    check()
  })
}

const turns = (messages: readonly Message[]) =>
  messages.map((m) => (m.role === 'user' ? `user:${String(m.content)}` : m.role))
const done = (s: ChatSnapshot) => !s.isLoading && s.queued.length === 0

describe('ChatRuntime: many messages, one thread (real server)', () => {
  it('messages typed while the first streams are queued in order, join the history as they start, all answered', async () => {
    const { rt } = runtime({ whileBusy: 'enqueue' })
    const seen: string[][] = []
    rt.subscribe(() => seen.push(rt.getSnapshot().queued.map((q) => `${q.position}:${q.text}`)))
    void rt.sendMessage('one')
    await until(rt, (s) => s.status === 'streaming')
    const second = rt.sendMessage('two')
    const third = rt.sendMessage('three')
    expect(rt.getSnapshot().queued.map((q) => [q.position, q.text])).toEqual([
      [1, 'two'],
      [2, 'three'],
    ])
    // Not in the history before its run starts.
    expect(turns(rt.getSnapshot().messages)).not.toContain('user:two')
    await Promise.all([second, third])
    const started = await until(rt, (s) => s.messages.some((m) => m.content === 'two'))
    // 'two' joined the history with its run; 'three' moved up.
    expect(started.queued.map((q) => [q.position, q.text])).toEqual([[1, 'three']])
    const end = await until(rt, done)
    expect(turns(end.messages)).toEqual(['user:one', 'assistant', 'user:two', 'assistant', 'user:three', 'assistant'])
    expect(end.error).toBeUndefined()
    expect(seen).toContainEqual(['1:three'])
    // The server has the same history, in the same order.
    const snapshot = await rt.recover()
    expect(turns(snapshot.snapshot.messages)).toEqual(turns(end.messages))
  })

  it('cancelQueued removes one queued run; the others keep their order and run', async () => {
    const { rt } = runtime({ whileBusy: 'enqueue' })
    void rt.sendMessage('one')
    await until(rt, (s) => s.status === 'streaming')
    await Promise.all([rt.sendMessage('two'), rt.sendMessage('three'), rt.sendMessage('four')])
    const three = rt.getSnapshot().queued.find((q) => q.text === 'three')!
    await rt.cancelQueued(three.runId)
    const after = rt.getSnapshot().queued
    expect(after.map((q) => [q.position, q.text])).toEqual([
      [1, 'two'],
      [2, 'four'],
    ])
    expect(() => rt.cancelQueued(three.runId)).toThrow(expect.objectContaining({ code: 'RUN_NOT_FOUND' }))
    const end = await until(rt, done)
    expect(turns(end.messages)).toEqual(['user:one', 'assistant', 'user:two', 'assistant', 'user:four', 'assistant'])
  })

  it('interrupt: the running run ends cancelled and the new message is answered next', async () => {
    const { rt, finishes } = runtime()
    void rt.sendMessage('one')
    await until(rt, (s) => s.messages.some((m) => m.role === 'assistant' && String(m.content).length > 0))
    await rt.sendMessage('instead', { whileBusy: 'interrupt' })
    const end = await until(rt, done)
    expect(finishes.map((f) => f.outcome)).toEqual(['cancelled', 'success'])
    expect(turns(end.messages)).toEqual(['user:one', 'assistant', 'user:instead', 'assistant'])
    expect(end.error).toBeUndefined()
  })

  it('steer: the message joins the running turn once, where the server put it', async () => {
    const { rt } = runtime()
    void rt.sendMessage('one')
    await until(rt, (s) => s.messages.some((m) => m.role === 'assistant' && String(m.content).length > 0))
    await rt.sendMessage('also this', { whileBusy: 'steer' })
    expect(rt.getSnapshot().queued).toEqual([])
    expect(turns(rt.getSnapshot().messages)).toContain('user:also this') // shown at once
    const end = await until(rt, done)
    expect(turns(end.messages).filter((t) => t === 'user:also this')).toHaveLength(1)
    expect(end.error).toBeUndefined()
    // One run, and the server's history is the one on screen.
    const { snapshot } = await rt.recover()
    expect(turns(snapshot.messages)).toEqual(turns(end.messages))
  })

  it('without whileBusy a busy runtime still refuses locally and sends nothing', async () => {
    const { rt } = runtime()
    void rt.sendMessage('one')
    await until(rt, (s) => s.status === 'streaming')
    expect(() => rt.sendMessage('two')).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }))
    expect(rt.getSnapshot().queued).toEqual([])
    await until(rt, done)
  })

  it('a reload while runs are queued shows the queue again, and the new runtime streams the rest', async () => {
    const storage = memoryStorage()
    const { rt } = runtime({ whileBusy: 'enqueue', queueStorage: storage })
    void rt.sendMessage('one')
    await until(rt, (s) => s.status === 'streaming')
    await Promise.all([rt.sendMessage('two'), rt.sendMessage('three')])
    const { threadId } = rt.getSnapshot()
    expect(storage.items.size).toBe(1)
    rt.dispose() // the page goes away; the server goes on
    const reloaded = runtime({ threadId, queueStorage: storage })
    const { attached } = await reloaded.rt.recover()
    expect(attached).toBe(true)
    const shown = reloaded.rt.getSnapshot()
    // The queue is back: whatever has not started yet, in order.
    expect(shown.queued.map((q) => q.text)).toEqual(
      ['two', 'three'].filter((text) => !shown.messages.some((m) => m.content === text)),
    )
    expect(shown.queued.length).toBeGreaterThan(0)
    const end = await until(reloaded.rt, done)
    expect(turns(end.messages)).toEqual(['user:one', 'assistant', 'user:two', 'assistant', 'user:three', 'assistant'])
    expect(storage.items.size).toBe(0)
  })
})
