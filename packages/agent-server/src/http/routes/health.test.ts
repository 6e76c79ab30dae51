import { describe, expect, it } from 'vitest'
import { serversPerTest } from '../../test-utils/in-process.ts'
import { gatedModel } from '../../test-utils/test-agents.ts'
import { newThreadId, runInput, userMessage } from '../../test-utils/harness.ts'

/** Health (docs/decisions.md#operating-it): public health says only ok / ready; counts live on the metrics endpoint. */

const server = serversPerTest()

describe('GET {base}/health', () => {
  it('tells an anonymous caller only ok and ready, even while runs execute, and readiness checks can be added', async () => {
    const gate = gatedModel()
    let shuttingDown = false
    const s = await server({
      agent: { model: gate.model, tools: [] },
      readiness: [{ name: 'shutdown', check: () => (shuttingDown ? 'STORE_UNAVAILABLE' : undefined) }],
    })
    const running = s.postRun(runInput(newThreadId(), [userMessage('hi')]))
    await gate.started
    const health = await s.request('/health', { principal: null })
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    const ready = await s.request('/health?ready', { principal: null })
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })
    shuttingDown = true
    expect((await s.request('/health?ready', { principal: null })).status).toBe(503)
    gate.release()
    await running
  })
})
