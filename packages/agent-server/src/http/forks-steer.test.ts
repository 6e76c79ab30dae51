import { describe, expect, it } from 'vitest'
import { until } from '../test-utils/child-server.ts'
import { postFork, snapshotOf } from '../test-utils/fork-kit.ts'
import { newThreadId, runInput, userMessage } from '../test-utils/harness.ts'
import { serversPerTest } from '../test-utils/in-process.ts'
import { inputWith, post, queueStores, slowTool } from '../test-utils/queue-harness.ts'
import { queueModel } from '../test-utils/queue-model.ts'
import { commandAgent, loggingTool } from '../test-utils/test-agents.ts'

/**
 * A fork at the message just before a steered one (docs/time-travel.md#state, docs/protocol.md#multitask): the state
 * is the one where the steer joined the running run, not the one before that run. SQLite and PostgreSQL.
 */
const server = serversPerTest()
const STORES = await queueStores('forks around steers on PostgreSQL')

describe.each(STORES)('a fork before a steered message on $name', ({ options }) => {
  it('has the state the run had made when the steer joined it', async () => {
    const slow = slowTool()
    const q = queueModel()
    const s = await server({
      ...(await options()),
      agent: commandAgent([loggingTool('a'), slow.tool], { model: q.model }),
    })
    const threadId = newThreadId()
    const calls = JSON.stringify({
      toolCalls: [
        { name: 'a', args: {} },
        { name: 'slow', args: {} },
      ],
    })
    const streaming = s.postRun(runInput(threadId, [userMessage(calls)]))
    await until(() => slow.running(), 'the slow tool runs')
    const steer = inputWith('steer', 'S', threadId)
    expect((await post(s, steer)).status).toBe(202)
    slow.open()
    expect((await streaming).status).toBe(200)

    const { body: parent } = await snapshotOf(s, threadId)
    const at = parent.messages.findIndex((m) => m.id === steer.messages[0]!.id)
    expect(at).toBeGreaterThan(0)
    const before = parent.messages[at - 1]!
    expect(before.role).toBe('tool')
    const fork = await postFork(s, threadId, { at: { messageId: before.id } })
    expect(fork.status).toBe(201)
    const { body: forked } = await snapshotOf(s, fork.body.threadId)
    expect(forked.state).toEqual({ log: ['a'] })
    expect(forked.messages.map((m) => m.id)).toEqual(parent.messages.slice(0, at).map((m) => m.id))
  })
})
