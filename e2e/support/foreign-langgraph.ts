import { startChild, type ChildServer, type LangGraphUrls } from '@interlude/interop/servers'
import { INTEROP_PAGE_DIST } from './paths.ts'

/**
 * The interop package's LangGraph stack (the real LangGraph API server behind `@ag-ui/langgraph`, see
 * interop/README.md) as a child, with the built `useChat` page served by its AG-UI endpoint (same origin).
 */
export function startForeignLangGraph(): Promise<ChildServer<LangGraphUrls>> {
  return startChild<LangGraphUrls>('src/langgraph/serve-langgraph.ts', { env: { INTEROP_PAGE_DIR: INTEROP_PAGE_DIST } })
}
