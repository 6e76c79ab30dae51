import { describe, expect, it } from 'vitest'
import type { Store } from '../../store/store.ts'
import { createSqliteStore } from '../../store/sqlite/sqlite-store.ts'
import { tempDir } from '../../test-utils/harness.ts'
import { checkUsageOptions } from '../../config/server-config.ts'
import { checkUsageCaps } from './usage.ts'

describe('token caps', () => {
  it('refuses bad caps, and caps on a store without usage methods, at startup', async () => {
    const tmp = tempDir()
    const store = await createSqliteStore(tmp.dbPath)
    try {
      expect(() => checkUsageOptions({ maxTokensPerThread: 0 }, store)).toThrow(/positive integer/)
      expect(() => checkUsageOptions({ maxTokensPerPrincipal: 1.5 }, store)).toThrow(/positive integer/)
      expect(() => checkUsageOptions({ maxTokensPerThread: 10 }, store)).not.toThrow()
      expect(() => checkUsageOptions(undefined, store)).not.toThrow()
      // A custom store without the optional usage methods cannot enforce a cap: refused, not ignored.
      const bare = { ...store, kind: store.kind, addRunUsage: undefined, sumUsage: undefined } as unknown as Store
      expect(() => checkUsageOptions({ maxTokensPerThread: 10 }, bare)).toThrow(/addRunUsage and sumUsage/)
      expect(() => checkUsageOptions({ onUsage: () => undefined }, bare)).not.toThrow()
      // Without caps nothing is read.
      await expect(checkUsageCaps(bare, { threadId: 't', principal: 'p' }, undefined)).resolves.toBeUndefined()
    } finally {
      await store.close()
      tmp.cleanup()
    }
  })
})
