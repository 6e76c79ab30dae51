import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['@interlude/source'] },
  ssr: { resolve: { conditions: ['@interlude/source'] } },
  test: { name: 'protocol', environment: 'node' },
})
