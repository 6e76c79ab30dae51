// @vitest-environment jsdom
/**
 * `useChat` with subagents (docs/client-contract.md#subagents), in <StrictMode> over a controllable transport: the
 * subagent's activity reaches React, the batch groups identically across renders, malformed `interlude.subagent` events are ignored, and the
 * grouped batch is resumed once.
 */
import type { AgUiEvent } from '@interlude/protocol'
import { act, cleanup, renderHook } from '@testing-library/react'
import { StrictMode, type ReactNode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { groupInterruptsBySubagent } from './core/subagent-groups.ts'
import { subagentText } from './core/subagent-view.ts'
import { approvalInterrupt, ControllableTransport, ev, step } from './test-utils/controllable-transport.ts'
import { useChat, type UseChatOptions } from './use-chat.ts'

afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

const sub = (event: unknown) =>
  ({
    type: 'CUSTOM',
    name: 'interlude.subagent',
    value: { subagentRunId: 'sub_1', agent: 'auditor', parentToolCallId: 'call-audit', event },
  }) as AgUiEvent

describe('useChat with subagents (StrictMode)', () => {
  it('exposes subagents and pendingGroups, survives malformed values, and resumes the grouped batch once', async () => {
    const transport = new ControllableTransport()
    let n = 0
    const options: UseChatOptions = {
      transport,
      threadId: 't1',
      generateId: () => `id-${++n}`,
      retry: { attempts: 0 },
      throttleMs: 5,
    }
    const view = renderHook(() => useChat(options), { wrapper: strict })
    act(() => void view.result.current.sendMessage('audit v2.1'))
    const call = await transport.waitForRun(1)
    expect(transport.runs).toHaveLength(1)
    const interrupts = [
      approvalInterrupt('i-sign', 'sc-1', {
        subagentRunId: 'sub_1',
        metadata: { subagent: { name: 'auditor', toolCallId: 'call-audit' } },
      }),
      approvalInterrupt('i-pub', 'call-pub'),
    ]
    await act(async () => {
      call.channel.pushAll([
        ev.runStarted('t1', call.input.runId),
        ev.toolStart('call-audit', 'audit'),
        ev.toolEnd('call-audit'),
        sub(ev.textStart('s-m')),
        sub(ev.text('s-m', 'Looks fine.')),
        { type: 'CUSTOM', name: 'interlude.subagent', value: 17 } as AgUiEvent,
        { type: 'CUSTOM', name: 'interlude.subagent', value: { subagentRunId: 'x', event: null } } as AgUiEvent,
        ev.interrupted('t1', call.input.runId, interrupts),
      ])
      await step(call.channel)
    })
    const current = view.result.current
    expect(current.error).toBeUndefined()
    expect(Object.keys(current.subagents)).toEqual(['sub_1'])
    expect(current.subagents.sub_1).toMatchObject({ agent: 'auditor', parentToolCallId: 'call-audit' })
    expect(subagentText(current.subagents.sub_1!)).toBe('Looks fine.')
    const groups = groupInterruptsBySubagent(current.pendingInterrupts!.interrupts)
    expect(groups.map((g) => g.label)).toEqual([undefined, 'auditor'])
    view.rerender()
    expect(groupInterruptsBySubagent(view.result.current.pendingInterrupts!.interrupts)).toBe(groups)

    const batch = current.pendingInterrupts!
    act(() => {
      void view.result.current.resume({
        batchId: batch.id,
        entries: batch.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
      })
    })
    const resumed = await transport.waitForRun(2)
    expect(transport.runs).toHaveLength(2)
    expect(resumed.input.resume?.map((e) => e.interruptId)).toEqual(['i-sign', 'i-pub'])
  })
})
