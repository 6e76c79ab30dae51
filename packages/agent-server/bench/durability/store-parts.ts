/** Parts 1 and 2 of the durability bench: event-log appends and batch claims, straight on the store. */
import { randomUUID } from 'node:crypto'
import { EventType } from '@interlude/protocol'
import type { Store } from '../../src/store/store.ts'
import { THREADS, ADMISSION_ROUNDS, lease, newRun } from './setup.ts'

// ---- 1. append throughput ----------------------------------------------------------------------

export async function appendThroughput(store: Store, batch: number, total: number): Promise<number> {
  const { threadId, runId } = await newRun(store)
  const json = JSON.stringify({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'msg_bench', delta: 'tok ' })
  const events = Array.from({ length: batch }, () => ({ type: EventType.TEXT_MESSAGE_CONTENT, json }))
  const started = performance.now()
  for (let written = 0; written < total; written += batch) await store.appendEvents(threadId, runId, events)
  return total / ((performance.now() - started) / 1000)
}

// ---- 2. claim latency --------------------------------------------------------------------------

export async function claimLatency(store: Store): Promise<number[]> {
  const samples: number[] = []
  for (let round = 0; round < ADMISSION_ROUNDS + 1; round++) {
    const paused = await Promise.all(
      Array.from({ length: THREADS }, async () => {
        const { threadId, runId } = await newRun(store)
        const batchId = `batch_${randomUUID()}`
        await store.insertToolCalls([
          {
            threadId,
            toolCallId: 'c1',
            runId,
            messageId: 'a1',
            toolName: 'deploy',
            argsText: '{}',
            kind: 'server',
            status: 'awaiting_decision',
            now: Date.now(),
          },
        ])
        await store.createBatch({
          batchId,
          threadId,
          runId,
          interrupts: [
            {
              interrupt: { id: `int_${randomUUID()}`, reason: 'tool_call', toolCallId: 'c1' },
              kind: 'approval',
              toolCallId: 'c1',
              toolName: 'deploy',
            },
          ],
          createdAt: Date.now(),
          expiresAt: Date.now() + 3_600_000,
          onExpiry: 'keep',
        })
        await store.finishRun({
          threadId,
          runId,
          status: 'interrupted',
          outcome: { type: 'interrupt', interrupts: [] },
          errorCode: undefined,
          events: [{ type: EventType.RUN_FINISHED, json: '{}' }],
          closeBatch: undefined,
          now: Date.now(),
        })
        return { threadId, batchId }
      }),
    )
    const times = await Promise.all(
      paused.map(async ({ threadId, batchId }) => {
        const started = performance.now()
        const claim = await store.claimBatch({
          threadId,
          batchId,
          runId: `run-${randomUUID()}`,
          decisionHash: 'h',
          decision: [],
          now: Date.now(),
          ...lease(),
          decidedBy: 'bench',
          via: 'run',
        })
        if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`)
        return performance.now() - started
      }),
    )
    if (round > 0) samples.push(...times)
  }
  return samples
}
