// `@interlude/agent-server/testing`: the Store conformance suite a custom store must pass, and the
// harness the server's own tests use (a real server on 127.0.0.1 with a SQLite file, and helpers for
// its SSE answers). It imports vitest, an optional peer dependency: only tests load this entry.
export { storeConformance } from './test-utils/store-conformance.ts'
export type { ConformanceDatabase } from './test-utils/store-conformance.ts'
export {
  authHeader,
  interruptsOf,
  lastState,
  newThreadId,
  postRun,
  resumeInput,
  runInput,
  startTestServer,
  tempDir,
  textOf,
  TOKENS,
  toolResults,
  types,
  userMessage,
} from './test-utils/harness.ts'
export type { RunResponse, TestServer } from './test-utils/harness.ts'
