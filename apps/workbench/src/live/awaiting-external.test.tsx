// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { AwaitingExternal } from './awaiting-external.tsx'

afterEach(cleanup)

describe('AwaitingExternal', () => {
  it('names who the call waits for, and shows nothing when no call waits', () => {
    const { rerender, container } = render(
      <AwaitingExternal calls={[{ toolCallId: 'c1', toolName: 'notify_oncall', resultFrom: ['pager', 'ops'] }]} />,
    )
    expect(screen.getByTestId('awaiting-external').textContent).toContain('notify_oncall')
    expect(screen.getByTestId('result-from').textContent).toBe('pager, ops (or you)')
    rerender(<AwaitingExternal calls={[]} />)
    expect(container.innerHTML).toBe('')
  })
})
