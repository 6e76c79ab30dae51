import { createPostgresStore } from '../store/postgres/postgres-store.ts'
import type { InProcessOptions, InProcessServer } from './in-process.ts'
import { startInProcess } from './in-process.ts'
import { createTestSchema, PG_URL, pgAvailable, TEST_POOLS } from './pg.ts'

/** Starts an in-process server on one store; `dispose` closes it and drops what it made (a file, a schema). */
export type StartOn = (options?: InProcessOptions) => Promise<InProcessServer>

/**
 * The stores a suite runs on: SQLite always, PostgreSQL when it is reachable (loudly skipped otherwise, a failure in
 * CI — docs/quality.md). Each start makes a fresh database: a temp file, or its own schema, dropped on dispose.
 */
export async function storeBackends(suite: string): Promise<[string, StartOn][]> {
  const backends: [string, StartOn][] = [['SQLite', (options = {}) => startInProcess(options)]]
  if (await pgAvailable(suite)) {
    backends.push([
      'PostgreSQL',
      async (options = {}) => {
        const { schema, drop } = await createTestSchema()
        const server = await startInProcess({
          ...options,
          store: await createPostgresStore({ connectionString: PG_URL, schema, ...TEST_POOLS }),
        })
        return {
          ...server,
          dispose: async () => {
            await server.dispose()
            await drop()
          },
        }
      },
    ])
  }
  return backends
}
