import { defineConfig } from 'vitest/config'

// One Vitest run over every package so the test command reports one total.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'interop'],
  },
})
