import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'

// The e2e page (`page/`): built to `page-dist/`, served by the LangGraph stack's AG-UI endpoint when
// INTEROP_PAGE_DIR names it (e2e/tests/foreign-langgraph.spec.ts).
export default defineConfig({
  root: 'page',
  base: './',
  plugins: [react()],
  resolve: { conditions: ['@interlude/source', ...defaultClientConditions] },
  build: { outDir: '../page-dist', emptyOutDir: true },
})
