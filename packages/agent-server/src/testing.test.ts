import { describe, expect, it } from 'vitest'

describe('@interlude/agent-server/testing', () => {
  it('exports the Store conformance suite and the test harness', async () => {
    const testing = await import('./testing.ts')
    expect(typeof testing.storeConformance).toBe('function')
    expect(Object.keys(testing).sort()).toEqual([
      'TOKENS',
      'authHeader',
      'interruptsOf',
      'lastState',
      'newThreadId',
      'postRun',
      'resumeInput',
      'runInput',
      'startTestServer',
      'storeConformance',
      'tempDir',
      'textOf',
      'toolResults',
      'types',
      'userMessage',
    ])
  })
})
