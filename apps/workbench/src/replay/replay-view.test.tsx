// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SHIPPED_RECORDINGS } from '../recordings/index.ts'
import { ReplayView } from './replay-view.tsx'

afterEach(cleanup)

beforeEach(() => {
  // jsdom has no layout; the view scrolls the selected frame into view.
  Element.prototype.scrollIntoView = () => undefined
})

describe('ReplayView over the shipped recordings', () => {
  it('ships at least two valid recordings made from real runs', () => {
    expect(SHIPPED_RECORDINGS.length).toBeGreaterThanOrEqual(2)
    for (const { recording } of SHIPPED_RECORDINGS) {
      expect(recording.frames.some((f) => f.kind === 'request-start' && f.purpose === 'resume')).toBe(true)
      expect(recording.frames.some((f) => f.kind === 'form' && f.phase === 'submit')).toBe(true)
    }
  })

  it.each(SHIPPED_RECORDINGS.map((item) => [item.id, item] as const))(
    '%s: walks every frame without a request or a write',
    (_id, item) => {
      const fetchSpy = vi.fn(() => Promise.reject(new Error('replay must not fetch')))
      vi.stubGlobal('fetch', fetchSpy)
      const setItem = vi.spyOn(Storage.prototype, 'setItem')
      const onReturn = vi.fn()
      try {
        render(<ReplayView recording={item.recording} sourceLabel="shipped" onReturnToLive={onReturn} />)
        const controls = screen.getByRole('toolbar', { name: 'Replay controls' })
        const forward = within(controls).getByRole('button', { name: 'Step forward' })
        for (let i = 1; i < item.recording.frames.length; i++) fireEvent.click(forward)
        expect(forward).toHaveProperty('disabled', true)
        expect(
          screen.getByText(`Frame ${item.recording.frames.length} / ${item.recording.frames.length}`, { exact: false }),
        ).toBeTruthy()

        // The paused frame pairs the SDK batch with the (not yet made) form choices.
        fireEvent.click(within(controls).getByRole('button', { name: 'batch 1' }))
        expect(screen.getByTestId('inspector-batch').textContent).toContain('tool_call')
        // Every live control is disabled.
        for (const button of within(screen.getByRole('region', { name: 'Conversation at this frame' })).getAllByRole(
          'button',
        )) {
          expect(button).toHaveProperty('disabled', true)
        }
        fireEvent.click(screen.getByRole('button', { name: 'Return to Live' }))
        expect(onReturn).toHaveBeenCalledOnce()
        expect(fetchSpy).not.toHaveBeenCalled()
        expect(setItem).not.toHaveBeenCalled()
      } finally {
        vi.unstubAllGlobals()
        setItem.mockRestore()
      }
    },
    // Hundreds of renders in jsdom: seconds on a shared 2-core machine, so more than the default 5 s.
    30_000,
  )

  it('steps with the arrow keys and jumps with Home and End', () => {
    const item = SHIPPED_RECORDINGS[0]!
    render(<ReplayView recording={item.recording} sourceLabel="shipped" onReturnToLive={() => undefined} />)
    const view = screen.getByTestId('replay-view')
    const total = item.recording.frames.length
    const counter = () => view.querySelector('.frame-counter')?.textContent ?? ''
    fireEvent.keyDown(view, { key: 'ArrowRight' })
    fireEvent.keyDown(view, { key: 'ArrowRight' })
    expect(counter()).toContain(`Frame 3 / ${total}`)
    fireEvent.keyDown(view, { key: 'ArrowLeft' })
    expect(counter()).toContain(`Frame 2 / ${total}`)
    fireEvent.keyDown(view, { key: 'End' })
    expect(counter()).toContain(`Frame ${total} / ${total}`)
    fireEvent.keyDown(view, { key: 'Home' })
    expect(counter()).toContain(`Frame 1 / ${total}`)
  })

  it('takes the focus when a recording opens, so the arrow keys step at once', () => {
    const item = SHIPPED_RECORDINGS[0]!
    render(<ReplayView recording={item.recording} sourceLabel="shipped" onReturnToLive={() => undefined} />)
    expect(document.activeElement).toBe(screen.getByTestId('replay-view'))
  })
})
