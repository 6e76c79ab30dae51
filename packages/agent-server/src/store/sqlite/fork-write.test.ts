import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-utils/harness.ts'
import { firstRunRequest } from '../conformance/kit.ts'
import { createSqliteStore } from './sqlite-store.ts'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

/**
 * On SQLite a fork copies its prefix in short transactions under a reserved key with no thread row yet
 * (docs/time-travel.md#cost): a first run on that key must not land in the middle of the copy.
 */
describe('SQLite: a fork still copying holds its key', () => {
  const now = 1_900_000_000_000
  let n = 0

  /** A store whose key `t` is reserved by a fork that copied one message at `reservedAt`. */
  function reservedStore(reservedAt: number) {
    const file = path.join(tmp.dir, `fork-key-${++n}.db`)
    const store = createSqliteStore(file)
    const db = new Database(file)
    db.prepare('INSERT INTO thread_forks (thread_id, parent_thread_id, at_json, created_at) VALUES (?, ?, ?, ?)').run(
      't',
      'parent',
      '{"messageId":"m1"}',
      reservedAt,
    )
    db.prepare(
      `INSERT INTO messages (thread_id, position, message_id, role, run_id, json, created_at)
       VALUES ('t', 0, 'm1', 'user', NULL, '{"id":"m1","role":"user","content":"copied"}', ?)`,
    ).run(reservedAt)
    const messagesOfT = () =>
      db.prepare<[], { message_id: string }>("SELECT message_id FROM messages WHERE thread_id = 't'").all()
    return { store, messagesOfT, close: async () => (db.close(), await store.close()) }
  }

  it('a first run on the key of a fork in progress is refused as thread_exists and writes nothing', async () => {
    const { store, messagesOfT, close } = reservedStore(now - 1000)
    expect(await store.startInputRun(firstRunRequest('t', 'r1', now))).toEqual({ ok: false, reason: 'thread_exists' })
    expect(await store.getThread('t')).toBeUndefined()
    expect(messagesOfT()).toEqual([{ message_id: 'm1' }])
    await close()
  })

  it('a reservation whose fork died (older than a minute) is cleared: the run starts on a clean key', async () => {
    const { store, messagesOfT, close } = reservedStore(now - 61_000)
    const started = await store.startInputRun(firstRunRequest('t', 'r1', now))
    expect(started.ok).toBe(true)
    expect(messagesOfT()).toEqual([])
    await close()
  })
})
