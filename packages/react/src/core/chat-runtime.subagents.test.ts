/**
 * Subagents in the runtime (docs/client-contract.md#subagents), over a controllable transport: a parent run whose
 * `audit` tool runs the `auditor` subagent streams `CUSTOM interlude.subagent` events, then pauses with a batch that
 * mixes a parent approval and the subagent's; the snapshot keeps the subagent's activity apart from the messages,
 * groups the batch, and the whole batch is answered by one resume.
 */
import type { AgUiEvent, Interrupt } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { approvalInterrupt, ev, step } from '../test-utils/controllable-transport.ts'
import { approveAll, setup } from '../test-utils/runtime-setup.ts'
import { flushDeltas } from './chat-runtime.ts'
import { groupInterruptsBySubagent } from './subagent-groups.ts'
import { subagentText, subagentToolCalls } from './subagent-view.ts'

const sub = (event: unknown, subagentRunId = 'sub_audit_1') =>
  ({
    type: 'CUSTOM',
    name: 'interlude.subagent',
    value: { subagentRunId, agent: 'auditor', parentToolCallId: 'call-audit', event },
  }) as AgUiEvent

const signOff = (id: string): Interrupt =>
  approvalInterrupt(id, 'sc-1', {
    subagentRunId: 'sub_audit_1',
    metadata: { toolName: 'sign_off', subagent: { name: 'auditor', toolCallId: 'call-audit' } },
  })

describe('ChatRuntime: subagents', () => {
  it('collects subagent events into snapshot.subagents (not messages), groups the batch, and resumes it in one request', async () => {
    const { rt, transport } = setup()
    void rt.sendMessage('audit v2.1')
    const call = await transport.waitForRun(1)
    const runId = call.input.runId
    call.channel.pushAll([
      ev.runStarted('t1', runId),
      ev.textStart('m-a'),
      ev.text('m-a', 'Asking the auditor.'),
      ev.textEnd('m-a'),
      ev.toolStart('call-pub', 'publish_release', 'm-a'),
      ev.toolArgs('call-pub', '{"version":"v2.1"}'),
      ev.toolEnd('call-pub'),
      ev.toolStart('call-audit', 'audit', 'm-a'),
      ev.toolArgs('call-audit', '{"version":"v2.1"}'),
      ev.toolEnd('call-audit'),
      sub(ev.runStarted('t-sub', 'r-sub')),
      sub(ev.textStart('sm-1')),
      sub(ev.text('sm-1', 'Reviewing v2.1.')),
      sub(ev.textEnd('sm-1')),
      sub(ev.toolStart('sc-1', 'sign_off', 'sm-1')),
      sub(ev.toolArgs('sc-1', '{"version":"v2.1"}')),
      sub(ev.toolEnd('sc-1')),
      { type: 'CUSTOM', name: 'interlude.subagent', value: { nonsense: true } } as AgUiEvent,
    ])
    await step(call.channel)
    flushDeltas(rt)
    const during = rt.getSnapshot()
    const audit = during.subagents.sub_audit_1!
    expect(audit).toMatchObject({ agent: 'auditor', parentToolCallId: 'call-audit', status: 'running' })
    expect(subagentText(audit)).toBe('Reviewing v2.1.')
    expect(subagentToolCalls(audit)).toEqual([
      { toolCallId: 'sc-1', toolName: 'sign_off', args: '{"version":"v2.1"}', result: undefined },
    ])
    // The parent's messages have no trace of the subagent's text or calls.
    expect(JSON.stringify(during.messages)).not.toContain('Reviewing')
    expect(JSON.stringify(during.messages)).not.toContain('sc-1')

    const parentApproval = approvalInterrupt('i-pub', 'call-pub')
    call.channel.pushAll([
      sub({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } }),
      ev.interrupted('t1', runId, [signOff('i-sign'), parentApproval]),
    ])
    await step(call.channel)
    const paused = rt.getSnapshot()
    expect(paused.subagents.sub_audit_1!.status).toBe('interrupted')
    const groups = groupInterruptsBySubagent(paused.pendingInterrupts?.interrupts)
    expect(groups.map((g) => [g.label, g.interrupts.map((i) => i.id)])).toEqual([
      [undefined, ['i-pub']],
      ['auditor', ['i-sign']],
    ])
    expect(groups[1]!.parentToolCallId).toBe('call-audit')
    // Identity-stable per snapshot: the batch (and its frozen interrupts) is the same object until it changes.
    expect(groupInterruptsBySubagent(rt.getSnapshot().pendingInterrupts?.interrupts)).toBe(groups)

    void rt.resume(approveAll(paused.pendingInterrupts!))
    const resumed = await transport.waitForRun(2)
    expect(transport.runs).toHaveLength(2)
    // One request, every entry with its own interrupt id, in batch order: the server routes them.
    expect(resumed.input.resume?.map((e) => e.interruptId)).toEqual(['i-sign', 'i-pub'])
    resumed.channel.pushAll([
      ev.runStarted('t1', resumed.input.runId),
      sub(ev.runStarted('t-sub', 'r-sub-2')),
      sub(ev.toolResult('sm-2', 'sc-1', '{"signed":true}')),
      sub(ev.finished('t-sub', 'r-sub-2')),
      ev.finished('t1', resumed.input.runId),
    ])
    await step(resumed.channel)
    const done = rt.getSnapshot()
    expect(groupInterruptsBySubagent(done.pendingInterrupts?.interrupts)).toEqual([])
    expect(done.subagents.sub_audit_1!.status).toBe('finished')
    expect(subagentToolCalls(done.subagents.sub_audit_1!)[0]!.result).toBe('{"signed":true}')
  })

  it('a thread change forgets the subagents of the old thread', async () => {
    const { rt, transport } = setup()
    void rt.sendMessage('audit')
    const call = await transport.waitForRun(1)
    call.channel.pushAll([ev.runStarted('t1', call.input.runId), sub(ev.runStarted('a', 'b'))])
    await step(call.channel)
    flushDeltas(rt)
    expect(Object.keys(rt.getSnapshot().subagents)).toEqual(['sub_audit_1'])
    rt.setThreadId('t2')
    expect(rt.getSnapshot().subagents).toEqual({})
  })
})
