import { describe, expect, it } from 'vitest'
import type { ExpiryPolicy } from '@interlude/protocol'
import { askUser } from '../agent/ask-user.ts'
import type { ToolDefinition } from '../agent/tool.ts'
import { defineTool, resolveTool } from '../agent/tool.ts'
import { ValidatorCache } from '../schema/validator-cache.ts'
import type { BatchRecord, NewBatch } from '../store/store.ts'
import type { ExpiryDefaults } from './expiry-policy.ts'
import { expiryDecision, isDue, isShown } from './expiry-policy.ts'
import { interruptBatch, interruptFor } from './tools/interrupts.ts'

/** Which policy and deadline a batch gets from its tools and the server, and what the deadline answers. */
const T = Date.parse('2033-01-01T00:00:00.000Z')
const validators = new ValidatorCache()

const approval = (name: string, extra: Partial<ToolDefinition> = {}) =>
  defineTool({
    name,
    description: name,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    approval: 'always',
    execute: () => 'ok',
    ...extra,
  })
const question = (extra: { timeout?: number; onExpiry?: ExpiryPolicy } = {}) =>
  askUser({ responseSchema: { type: 'object', properties: { a: { type: 'string' } } }, ...extra })

function batchOf(tools: readonly ToolDefinition[], defaults: Partial<ExpiryDefaults> = {}): NewBatch {
  const expiry: ExpiryDefaults = { ttlMs: 60_000, onExpiry: undefined, ...defaults }
  const pending = tools.map((t, i) => interruptFor(resolveTool(t), `call_${i}`, {}, expiry))
  return interruptBatch({ threadId: 't', runId: 'r' }, pending, T)
}

const stored = (batch: NewBatch): BatchRecord => ({
  ...batch,
  status: 'pending',
  decisionHash: undefined,
  decision: undefined,
  claimedByRunId: undefined,
})

const answers = (batch: NewBatch) => expiryDecision(stored(batch), validators)?.entries.map((e) => e.status)

describe('deadline and policy of a batch', () => {
  it('defaults: deny for approvals, cancel for questions; the deadline is the TTL', () => {
    const batch = batchOf([approval('a'), question()])
    expect(batch.expiresAt).toBe(T + 60_000)
    expect(batch.interrupts.map((i) => i.interrupt.expiresAt)).toEqual([
      new Date(T + 60_000).toISOString(),
      new Date(T + 60_000).toISOString(),
    ])
    expect(batch.interrupts.map((i) => i.interrupt.metadata?.onExpiry)).toEqual(['deny', 'cancel'])
    expect(batch.onExpiry).toBe('deny')
    expect(expiryDecision(stored(batch), validators)).toEqual({
      entries: [
        {
          interruptId: batch.interrupts[0]!.interrupt.id,
          status: 'resolved',
          payload: { approved: false, reason: 'expired' },
        },
        { interruptId: batch.interrupts[1]!.interrupt.id, status: 'cancelled' },
      ],
      allCancelled: false,
    })
  })

  it('the smallest timeout of its interrupts (a tool without one counts the TTL); a tool may outlast the TTL', () => {
    expect(batchOf([approval('a', { timeout: 5 }), approval('b', { timeout: 9 }), question()]).expiresAt).toBe(T + 5000)
    expect(batchOf([approval('a', { timeout: 7200 }), question()]).expiresAt).toBe(T + 60_000)
    expect(batchOf([approval('a', { timeout: 7200 })]).expiresAt).toBe(T + 7_200_000)
    expect(batchOf([question({ timeout: 0.25 })]).expiresAt).toBe(T + 250)
  })

  it('a tool’s own onExpiry beats the server’s, which beats the default; each interrupt keeps its own answer', () => {
    const mixed = batchOf([approval('a'), approval('b', { onExpiry: 'cancel' }), question({ onExpiry: 'deny' })])
    expect(mixed.interrupts.map((i) => i.interrupt.metadata?.onExpiry)).toEqual(['deny', 'cancel', 'deny'])
    expect(mixed.onExpiry).toBe('deny')
    // There is no "no" to a question: under deny it is cancelled.
    expect(answers(mixed)).toEqual(['resolved', 'cancelled', 'cancelled'])

    const server = batchOf([approval('a'), approval('b', { onExpiry: 'deny' })], { onExpiry: 'cancel' })
    expect(server.interrupts.map((i) => i.interrupt.metadata?.onExpiry)).toEqual(['cancel', 'deny'])
    expect(answers(server)).toEqual(['cancelled', 'resolved'])

    const cancelled = batchOf([approval('a'), question()], { onExpiry: 'cancel' })
    expect(cancelled.onExpiry).toBe('cancel')
    expect(expiryDecision(stored(cancelled), validators)?.allCancelled).toBe(true)
  })

  it('keep wins: nothing is decided for the person, and every interrupt says so', () => {
    const kept = batchOf([approval('a'), question({ onExpiry: 'keep' })])
    expect(kept.onExpiry).toBe('keep')
    expect(kept.interrupts.map((i) => i.interrupt.metadata?.onExpiry)).toEqual(['keep', 'keep'])
    expect(expiryDecision(stored(kept), validators)).toBeUndefined()
    expect(isDue(stored(kept), T + 10 ** 9)).toBe(false)
    expect(isShown(stored(kept), T + 10 ** 9)).toBe(true)
    expect(batchOf([approval('a')], { onExpiry: 'keep' }).onExpiry).toBe('keep')
  })

  it('due and shown at the deadline', () => {
    const batch = stored(batchOf([approval('a')]))
    expect([isDue(batch, T + 59_999), isShown(batch, T + 59_999)]).toEqual([false, true])
    expect([isDue(batch, T + 60_000), isShown(batch, T + 60_000)]).toEqual([true, false])
    expect(isDue({ ...batch, status: 'claimed' }, T + 60_000)).toBe(false)
  })

  it('a batch stored without per-interrupt policies answers by its column; a schema refusing the denial gets a cancellation', () => {
    const batch = stored(batchOf([approval('a'), approval('b')]))
    const legacy: BatchRecord = {
      ...batch,
      onExpiry: 'cancel',
      interrupts: batch.interrupts.map((i) => ({
        ...i,
        interrupt: { ...i.interrupt, metadata: { toolName: i.toolName } },
      })),
    }
    expect(expiryDecision(legacy, validators)?.allCancelled).toBe(true)
    expect(expiryDecision({ ...legacy, onExpiry: 'deny' }, validators)?.entries.map((e) => e.status)).toEqual([
      'resolved',
      'resolved',
    ])
    const strict: BatchRecord = {
      ...batch,
      interrupts: batch.interrupts.map((i) => ({
        ...i,
        interrupt: { ...i.interrupt, responseSchema: { type: 'object', additionalProperties: false, properties: {} } },
      })),
    }
    expect(expiryDecision(strict, validators)?.entries.map((e) => e.status)).toEqual(['cancelled', 'cancelled'])
  })
})

describe('bad deadline options of a tool', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 10 ** 12, '5'])(
    'timeout %s is refused at construction',
    (timeout) => {
      expect(() => resolveTool(approval('slow', { timeout: timeout as number }))).toThrow(
        /^Tool "slow": timeout must be a positive number of seconds/,
      )
      expect(() => resolveTool(question({ timeout: timeout as number }))).toThrow(RangeError)
    },
  )

  it('an unknown onExpiry is refused at construction', () => {
    expect(() => resolveTool(approval('x', { onExpiry: 'ignore' as ExpiryPolicy }))).toThrow(
      'Tool "x": onExpiry must be one of deny, cancel, keep (got "ignore").',
    )
  })
})
