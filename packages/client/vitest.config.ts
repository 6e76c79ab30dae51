import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['@interlude/source'] },
  ssr: { resolve: { conditions: ['@interlude/source'] } },
  test: { name: 'client', environment: 'node', testTimeout: 30_000, hookTimeout: 30_000 },
})
