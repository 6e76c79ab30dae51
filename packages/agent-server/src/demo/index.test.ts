import { describe, expect, it } from 'vitest'

describe('@interlude/agent-server/demo', () => {
  it('exports the release assistant, its script and its input schema', async () => {
    expect(Object.keys(await import('./index.ts')).sort()).toEqual([
      'ENVIRONMENT_CHOICE_SCHEMA',
      'MAINTENANCE_WINDOW_SCHEMA',
      'releaseAssistant',
      'releaseAssistantScript',
    ])
  })
})
