import { InterludeError } from '@interlude/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { approvalInterrupt, ControllableTransport, ev, step, tick } from '../test-utils/controllable-transport.ts'
import { ChatRuntime } from './chat-runtime.ts'
import { CompletionInput } from './completion-input.ts'

const runtimes: ChatRuntime[] = []
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.dispose()
})

function setup() {
  const transport = new ControllableTransport()
  let n = 0
  const rt = new ChatRuntime({
    transport,
    threadId: 't',
    generateId: () => `id-${++n}`,
    retry: { attempts: 0 },
    throttleMs: 60_000,
  })
  runtimes.push(rt)
  const input = new CompletionInput(rt)
  input.connect()
  return { rt, transport, input }
}

const sentTexts = (transport: ControllableTransport) =>
  transport.runs.map((r) => (r.input.messages.at(-1)?.content as string) ?? '')

async function pauseRun(transport: ControllableTransport, n: number) {
  const call = await transport.waitForRun(n)
  call.channel.pushAll([
    ev.runStarted('t', call.input.runId),
    ev.interrupted('t', call.input.runId, [approvalInterrupt(`i-${n}`, `c-${n}`)]),
  ])
  await step(call.channel)
}

async function finishRun(transport: ControllableTransport, n: number) {
  const call = await transport.waitForRun(n)
  call.channel.pushAll([ev.runStarted('t', call.input.runId), ev.finished('t', call.input.runId)])
  await step(call.channel)
}

function approve(rt: ChatRuntime) {
  const b = rt.getSnapshot().pendingInterrupts!
  void rt.resume({
    batchId: b.id,
    entries: b.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { approved: true } })),
  })
}

describe('CompletionInput', () => {
  it('A→B→C during a pause still resumes A; after success only C is sent', async () => {
    const { rt, transport, input } = setup()
    input.setInput('A')
    await pauseRun(transport, 1)
    input.setInput('B')
    input.setInput('C')
    expect(input.getDeferred()).toBe('C')
    await tick()
    expect(transport.runs).toHaveLength(1)
    approve(rt)
    const resumed = await transport.waitForRun(2)
    expect(resumed.input.resume?.[0]?.interruptId).toBe('i-1') // A's batch is what gets answered
    await finishRun(transport, 2)
    await transport.waitForRun(3)
    expect(sentTexts(transport)).toEqual(['A', 'A', 'C'])
    expect(input.getDeferred()).toBeUndefined()
  })

  it('another interrupt keeps C deferred; a failure or a stop does not send it', async () => {
    const { rt, transport, input } = setup()
    input.setInput('A')
    await pauseRun(transport, 1)
    input.setInput('C')
    approve(rt)
    await pauseRun(transport, 2) // the resumed run pauses again
    await tick()
    expect(transport.runs).toHaveLength(2)
    expect(input.getDeferred()).toBe('C')
    approve(rt)
    const failing = await transport.waitForRun(3)
    failing.channel.fail(new InterludeError('RUN_FAILED', 'no'))
    await step(failing.channel)
    await tick()
    expect(transport.runs).toHaveLength(3)
    expect(input.getDeferred()).toBe('C')
  })

  it('forgets deferred input on a thread change and ignores unchanged values', async () => {
    const { rt, transport, input } = setup()
    input.setInput('A')
    input.setInput('A')
    await pauseRun(transport, 1)
    input.setInput('B')
    rt.setThreadId('t2')
    expect(input.getDeferred()).toBeUndefined()
    input.setInput('A') // a new thread: the same text is new input there
    await transport.waitForRun(2)
    expect(sentTexts(transport)).toEqual(['A', 'A'])
  })
})
