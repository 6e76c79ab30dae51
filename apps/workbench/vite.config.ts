import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'

// Workspace packages resolve to their TypeScript source through the `@interlude/source` export
// condition, so the workbench builds and runs without building the libraries first.
const apiTarget = process.env.INTERLUDE_API ?? 'http://127.0.0.1:8787'

export default defineConfig({
  plugins: [react()],
  resolve: { conditions: ['@interlude/source', ...defaultClientConditions] },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  preview: {
    host: '127.0.0.1',
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
})
