import { defineProject } from 'vitest/config'

// The real servers start once, as children, in the global setup (several seconds); the runs themselves are quick.
export default defineProject({
  resolve: { conditions: ['@interlude/source'] },
  ssr: { resolve: { conditions: ['@interlude/source'] } },
  test: {
    name: 'interop',
    environment: 'node',
    include: ['src/**/*.test.ts'],
    globalSetup: ['src/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
