// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react'
import { StrictMode, useState } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { setIn } from './form-state.ts'
import { SchemaField } from './schema-field.tsx'
import { validatePayload } from './validate-payload.ts'

afterEach(cleanup)

const schema = {
  type: 'object',
  title: 'Rollout',
  properties: {
    environment: { type: 'string', enum: ['staging', 'production'], title: 'Environment' },
    replicas: { type: 'integer', minimum: 1, title: 'Replicas', description: 'Pods to start' },
  },
  required: ['environment'],
} as const

/** A custom renderer's own form: the exported field over its own value, validated like the default form. */
function Rollout() {
  const [value, setValue] = useState<unknown>({})
  return (
    <>
      <SchemaField
        id="rollout"
        name="rollout"
        schema={schema}
        value={value}
        errors={validatePayload(schema, value)}
        onChange={(path, v) => setValue((previous: unknown) => setIn(previous, path, v))}
      />
      <output>{JSON.stringify(value)}</output>
    </>
  )
}

describe('<SchemaField> (exported for custom renderers)', () => {
  it('renders a schema’s fields, reports changes by path and shows the errors at each field', () => {
    render(
      <StrictMode>
        <Rollout />
      </StrictMode>,
    )
    expect(screen.getByRole('group', { name: 'Rollout' })).toBeDefined()
    fireEvent.change(screen.getByLabelText(/Environment/), { target: { value: '1' } }) // options are keyed by index
    const replicas = screen.getByLabelText(/Replicas/)
    expect(replicas.getAttribute('aria-describedby')).toContain('rollout-replicas-description')
    fireEvent.change(replicas, { target: { value: '0' } })
    expect(screen.getByRole('status').textContent).toBe('{"environment":"production","replicas":0}')
    expect(replicas.getAttribute('aria-invalid')).toBe('true')
    const [minimum] = validatePayload(schema, { environment: 'production', replicas: 0 })
    expect(minimum).toMatchObject({ path: ['replicas'], keyword: 'minimum' })
    expect(document.getElementById('rollout-replicas-error')?.textContent).toBe(minimum!.message)
    fireEvent.change(replicas, { target: { value: '2' } })
    expect(replicas.getAttribute('aria-invalid')).toBeNull()
  })
})
