// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { App } from './app.tsx'

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
  window.history.replaceState(null, '', '/')
})

beforeEach(() => {
  Element.prototype.scrollIntoView = () => undefined
})

describe('App', () => {
  it('opens a shipped recording from ?replay= without mounting the live session or fetching', () => {
    const fetchSpy = vi.fn(() => Promise.reject(new Error('no network in replay')))
    vi.stubGlobal('fetch', fetchSpy)
    window.history.replaceState(null, '', '/?replay=01-release-approved')
    render(<App />)
    expect(screen.getByTestId('mode').textContent).toBe('Replay')
    expect(screen.getByTestId('replay-view')).toBeTruthy()
    expect(document.querySelector('.live-container')).toBeNull()
    fireEvent.click(
      within(screen.getByRole('toolbar', { name: 'Replay controls' })).getByRole('button', { name: 'Last frame' }),
    )
    expect(fetchSpy).not.toHaveBeenCalled()
    expect(window.location.search).toBe('?replay=01-release-approved')
  })

  it('refuses a file that is not a recording and says why, as text', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.reject(new Error('offline'))),
    )
    window.history.replaceState(null, '', '/?replay=02-release-deny-cancel')
    render(<App />)
    const input = document.querySelector<HTMLInputElement>('input[type="file"]')!
    const file = new File(['{"version":2,"frames":[]}'], 'future.json', { type: 'application/json' })
    await act(async () => {
      fireEvent.change(input, { target: { files: [file] } })
      await new Promise((resolve) => setTimeout(resolve, 0))
    })
    const alert = await screen.findByRole('alert')
    expect(alert.textContent).toContain('unsupported recording version 2')
    // The replay that was open stays open.
    expect(screen.getByTestId('mode').textContent).toBe('Replay')
  })
})
