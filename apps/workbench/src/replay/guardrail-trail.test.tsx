// @vitest-environment jsdom
import { GUARDRAIL_EVENT_NAME } from '@interlude/protocol'
import { cleanup, render, screen, within } from '@testing-library/react'
import { StrictMode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import type { Json, Recording, RecordingFrame } from '../recording/recording-types.ts'
import { InspectorPanel } from './inspector-panel.tsx'
import { buildReplayIndex } from './replay-index.ts'

/** Guardrail events in the replay inspector (docs/guardrails.md#events): every check up to the selected frame. */

afterEach(cleanup)

const guardrail = (value: { readonly [key: string]: Json }): Json => ({
  type: 'CUSTOM',
  name: GUARDRAIL_EVENT_NAME,
  value,
})

const frames: RecordingFrame[] = [
  { seq: 0, t: 0, kind: 'request-start', requestId: 'r1', method: 'POST', path: '/api/agent/runs', purpose: 'run' },
  { seq: 1, t: 1, kind: 'sse-event', requestId: 'r1', sseId: '1', event: { type: 'RUN_STARTED' } },
  {
    seq: 2,
    t: 2,
    kind: 'sse-event',
    requestId: 'r1',
    sseId: '2',
    event: guardrail({
      name: 'semver',
      on: 'args',
      pass: false,
      reason: 'not semver',
      action: 'human',
      toolCallId: 'c1',
    }),
  },
  {
    seq: 3,
    t: 3,
    kind: 'sse-event',
    requestId: 'r1',
    sseId: '3',
    event: guardrail({ name: 'no-secrets', on: 'output', pass: true, messageId: 'm1' }),
  },
  { seq: 4, t: 4, kind: 'sse-event', requestId: 'r1', sseId: '4', event: { type: 'CUSTOM', name: 'other', value: 1 } },
]
const recording = { version: 1, frames } as unknown as Recording

describe('guardrails in the replay inspector', () => {
  it('lists the checks received up to the frame, failures and passes marked', () => {
    const index = buildReplayIndex(recording)
    expect(index.inspect(1)!.guardrails).toEqual([])
    const view = index.inspect(4)!
    expect(view.guardrails.map((g) => g.name)).toEqual(['semver', 'no-secrets'])
    render(
      <StrictMode>
        <InspectorPanel view={view} />
      </StrictMode>,
    )
    const list = screen.getByRole('list', { name: 'Guardrails at this frame' })
    const items = within(list).getAllByRole('listitem')
    expect(items.map((i) => i.textContent)).toEqual([
      'semver on args (c1) · failed: not semver · asks a person',
      'no-secrets on output (m1) · passed',
    ])
    expect(items.map((i) => i.getAttribute('data-pass'))).toEqual(['false', 'true'])
  })
})
