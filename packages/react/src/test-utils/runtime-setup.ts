import type { Interrupt } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { afterEach } from 'vitest'
import { ChatRuntime } from '../core/chat-runtime.ts'
import type { ChatRuntimeOptions } from '../core/types.ts'
import { approvalInterrupt, ControllableTransport, ev, step } from './controllable-transport.ts'

/**
 * Shared set-up of the ChatRuntime unit tests: a runtime over a controllable transport with a fixed
 * clock, disposed after each test of the file that imports this module.
 */
export const T0 = Date.parse('2030-01-01T00:00:00Z')
const runtimes: ChatRuntime[] = []
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.dispose()
})

export function setup(options: Partial<ChatRuntimeOptions> = {}) {
  const transport = new ControllableTransport()
  let n = 0
  const clock = { now: T0 }
  const rt = new ChatRuntime({
    transport,
    threadId: 't1',
    generateId: () => `id-${++n}`,
    now: () => clock.now,
    retry: { attempts: 2, delayMs: () => 0 },
    reconnect: { attempts: 2, delayMs: () => 0 },
    throttleMs: 60_000, // deltas commit only on lifecycle events or an explicit flush()
    follow: false, // the follower has its own tests (chat-runtime.follow.test.ts)
    ...options,
  })
  runtimes.push(rt)
  const seen = { notifications: 0 }
  rt.subscribe(() => seen.notifications++)
  return { rt, transport, clock, seen }
}

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    if (InterludeError.isInstance(error)) return error.code
    throw error
  }
  return undefined
}

export const twoApprovals = (extra: Partial<Interrupt> = {}) => [
  approvalInterrupt('i-1', 'call-1', extra),
  approvalInterrupt('i-2', 'call-2', extra),
]

/** Sends a message and pauses the run with the given interrupts. */
export async function pause(ctx: ReturnType<typeof setup>, interrupts: Interrupt[] = twoApprovals()) {
  const { rt, transport } = ctx
  const before = transport.runs.length
  void rt.sendMessage('deploy v2.1')
  const call = await transport.waitForRun(before + 1)
  const runId = call.input.runId
  call.channel.pushAll([
    ev.runStarted('t1', runId),
    ev.textStart('m-a'),
    ev.text('m-a', 'Plan: publish then deploy.'),
    ev.textEnd('m-a'),
    ev.toolStart('call-1', 'publish_release', 'm-a'),
    ev.toolArgs('call-1', '{"version":"v2.1"}'),
    ev.toolEnd('call-1'),
    ev.toolStart('call-2', 'deploy', 'm-a'),
    ev.toolArgs('call-2', '{"version":"v2.1","environment":"staging"}'),
    ev.toolEnd('call-2'),
    ev.stateSnapshot({ releases: [] }),
    ev.interrupted('t1', runId, interrupts),
  ])
  await step(call.channel)
  const batch = rt.getSnapshot().pendingInterrupts
  if (!batch) throw new Error('no batch published')
  return { call, batch }
}

export const approveAll = (batch: { id: string; interrupts: readonly Interrupt[] }, approved = true) => ({
  batchId: batch.id,
  entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { approved } })),
})
