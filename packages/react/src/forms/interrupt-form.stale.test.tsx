// @vitest-environment jsdom
/**
 * An `interlude:stale` re-ask (docs/approvals.md#stale-approvals) in <StrictMode>: the form shows the server's message
 * as the title, what changed (before / now) and the usual approval choices.
 */
import { STALE_INTERRUPT_REASON } from '@interlude/protocol'
import { cleanup, render, screen } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { approval } from '../test-utils/form-fixtures.ts'
import { InterruptForm } from './interrupt-form.tsx'

afterEach(cleanup)

describe('<InterruptForm> with a stale re-ask', () => {
  it('shows the message, before and now, and offers approve / deny', () => {
    render(
      <StrictMode>
        <InterruptForm
          batch={{
            id: 'b-stale',
            interrupts: [
              {
                id: 'i-stale',
                reason: STALE_INTERRUPT_REASON,
                toolCallId: 'call-deploy',
                message: 'What this approval is about changed while it waited. Deploy v2.1 to production?',
                responseSchema: approval(),
                metadata: {
                  toolName: 'deploy',
                  arguments: { version: 'v2.1', environment: 'production' },
                  before: { running: 'v2.0' },
                  after: { running: 'v2.2' },
                  observed: { running: 'v2.2' },
                },
              },
            ],
          }}
          onSubmit={() => {}}
        />
      </StrictMode>,
    )
    expect(screen.getByText(/changed while it waited\. Deploy v2\.1 to production\?/)).toBeTruthy()
    const note = screen.getByRole('note', { name: 'Changed while you decided' })
    expect(note.textContent).toContain('{"running":"v2.0"}')
    expect(note.textContent).toContain('{"running":"v2.2"}')
    expect(screen.getByRole('radio', { name: 'Approve' })).toBeTruthy()
    expect(screen.getByRole('radio', { name: 'Deny' })).toBeTruthy()
  })
})
