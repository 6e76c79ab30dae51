import { defineProject } from 'vitest/config'

// DOM tests opt into jsdom per file with `// @vitest-environment jsdom`.
export default defineProject({
  resolve: { conditions: ['@interlude/source'] },
  ssr: { resolve: { conditions: ['@interlude/source'] } },
  test: { name: 'workbench', environment: 'node', include: ['src/**/*.test.{ts,tsx}'] },
})
