// @vitest-environment jsdom
/**
 * The headless form without traps (docs/client-contract.md#form-helpers), inside <StrictMode>: commands apply to the
 * newest state at once, so one click can answer and submit; `setPayload`'s updater is typed; `toolArgs` falls back to
 * the interrupt's metadata; an unanswered interrupt is reported with the documented `unanswered` keyword.
 */
import type { Interrupt } from '@interlude/protocol'
import { InterludeError } from '@interlude/protocol'
import { act, cleanup, fireEvent, render, renderHook, screen } from '@testing-library/react'
import { StrictMode, useState, type ReactNode } from 'react'
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch, ResumeOptions } from '../core/types.ts'
import { askBatch, history, releaseBatch } from '../test-utils/form-fixtures.ts'
import { UNANSWERED, useInterruptForm } from './use-interrupt-form.ts'

afterEach(cleanup)

const strict = ({ children }: { children: ReactNode }) => <StrictMode>{children}</StrictMode>

describe('useInterruptForm reads its newest state synchronously', () => {
  it('approveAll() then resume(buildResume()) in the same click sends the approvals', () => {
    const resume = vi.fn()
    function Approve({ batch }: { batch: PendingInterruptBatch }) {
      const form = useInterruptForm(batch)
      return (
        <button
          type="button"
          onClick={() => {
            form.approveAll()
            resume(form.buildResume())
          }}
        >
          Approve everything
        </button>
      )
    }
    render(
      <StrictMode>
        <Approve batch={releaseBatch()} />
      </StrictMode>,
    )
    fireEvent.click(screen.getByRole('button', { name: 'Approve everything' }))
    expect(resume).toHaveBeenCalledTimes(1)
    expect(resume).toHaveBeenCalledWith({
      batchId: 'b-1',
      entries: [
        { interruptId: 'i-pub', status: 'resolved', payload: { approved: true } },
        { interruptId: 'i-dep', status: 'resolved', payload: { approved: true } },
      ],
    })
  })

  it('chains commands in one handler, and submit() marks the attempt and keeps a synchronous refusal', () => {
    const { result } = renderHook(() => useInterruptForm(releaseBatch(), { messages: history }), { wrapper: strict })
    const sent: ResumeOptions[] = []
    act(() => {
      expect(result.current.submit((r) => sent.push(r))).toBe(false) // nothing answered: nothing sent
      result.current.deny('i-pub', 'not today')
      result.current.editArgs('i-dep', (args) => ({ ...(args as object), replicas: 3 }))
      expect(result.current.getState()).toMatchObject({ isComplete: true, isValid: true })
      expect(result.current.submit((r) => sent.push(r))).toBe(true)
    })
    expect(result.current.attempted).toBe(true)
    expect(sent).toEqual([
      {
        batchId: 'b-1',
        entries: [
          { interruptId: 'i-pub', status: 'resolved', payload: { approved: false, reason: 'not today' } },
          {
            interruptId: 'i-dep',
            status: 'resolved',
            payload: { approved: true, editedArgs: { version: 'v2.1', environment: 'staging', replicas: 3 } },
          },
        ],
      },
    ])
    act(() => {
      const ok = result.current.submit(() => {
        throw new InterludeError('BATCH_CLAIMED', 'This batch is already being answered.')
      })
      expect(ok).toBe(false)
    })
    expect(result.current.failure).toBe('This batch is already being answered. (BATCH_CLAIMED)')
  })

  it('ignores a stale command of an older batch', () => {
    const { result, rerender } = renderHook(({ batch }: { batch: PendingInterruptBatch }) => useInterruptForm(batch), {
      wrapper: strict,
      initialProps: { batch: releaseBatch('b-old') },
    })
    const old = result.current
    rerender({ batch: releaseBatch('b-new') })
    act(() => old.approveAll())
    expect(result.current).toMatchObject({ batchId: 'b-new', drafts: {} })
    expect(() => result.current.buildResume()).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
  })
})

describe('setPayload', () => {
  it('takes a typed updater of the current payload, applied in order within one handler', () => {
    const { result } = renderHook(() => useInterruptForm(askBatch()), { wrapper: strict })
    act(() => {
      // `previous` is typed (unknown), no annotation needed; two updaters in one handler both apply.
      result.current.setPayload('i-ask', (previous) => {
        expectTypeOf(previous).toEqualTypeOf<unknown>()
        return { ...(previous as object | undefined), environment: 'staging' }
      })
      result.current.setPayload('i-ask', (previous) => ({ ...(previous as object), notes: 'after lunch' }))
    })
    expect(result.current.drafts['i-ask']).toEqual({
      status: 'resolved',
      payload: { environment: 'staging', notes: 'after lunch' },
    })
    act(() => result.current.setPayload('i-ask', { environment: 'production' }))
    expect(result.current.buildResume().entries[0]).toMatchObject({ payload: { environment: 'production' } })
  })
})

describe('toolArgs', () => {
  const bound = (metadata: Record<string, unknown>, toolCallId = 'c-x'): Interrupt =>
    deepFreeze({ id: 'i-x', reason: 'tool_call', toolCallId, metadata, responseSchema: { type: 'object' } })

  it('reads the history first, else metadata.arguments (an object or a JSON string), else undefined', () => {
    const { result } = renderHook(() => useInterruptForm(releaseBatch(), { messages: history }), { wrapper: strict })
    const form = result.current
    expect(form.toolArgs(form.interrupts[1]!)).toEqual({ version: 'v2.1', environment: 'staging' })
    expect(form.toolArgs(bound({ toolName: 'deploy', arguments: { version: 'v3' } }))).toEqual({ version: 'v3' })
    expect(form.toolArgs(bound({ arguments: '{"version":"v4"}' }))).toEqual({ version: 'v4' })
    expect(form.toolArgs(bound({ args: { version: 'v5' } }))).toEqual({ version: 'v5' })
    expect(form.toolName(bound({ toolName: 'deploy' }))).toBe('deploy')
    expect(form.toolArgs(bound({}))).toBeUndefined()
    // Without history at all, the server's metadata is enough to start an edit.
    const bare = renderHook(() => useInterruptForm(undefined), { wrapper: strict }).result.current
    expect(bare.toolArgs(bound({ arguments: { version: 'v3' } }, 'c-dep'))).toEqual({ version: 'v3' })
  })
})

describe('errors', () => {
  it('reports an unanswered interrupt with the `unanswered` keyword, and a schema error with its own', () => {
    function Errors() {
      const form = useInterruptForm(askBatch())
      const [shown, setShown] = useState('')
      return (
        <button
          type="button"
          onClick={() => {
            const before = form.getState().errors['i-ask']
            form.setPayload('i-ask', { environment: 'moon' })
            const after = form.getState().errors['i-ask']
            setShown(JSON.stringify([before?.map((e) => e.keyword), after?.map((e) => e.keyword)]))
          }}
        >
          {shown || 'check'}
        </button>
      )
    }
    render(
      <StrictMode>
        <Errors />
      </StrictMode>,
    )
    fireEvent.click(screen.getByRole('button', { name: 'check' }))
    expect(screen.getByRole('button').textContent).toBe(JSON.stringify([[UNANSWERED], ['enum']]))
    expect(UNANSWERED).toBe('unanswered')
  })
})
