import { describe, expect, it } from 'vitest'
import { isModuleNotFound, missingPeer } from './optional-peer.ts'

describe('optional peer dependencies', () => {
  it('recognises a package that is not installed and names it in the error', async () => {
    const failure = await import('interlude-no-such-package' as string).catch((error: unknown) => error)
    expect(isModuleNotFound(failure)).toBe(true)
    const error = missingPeer('pg', 'The PostgreSQL store', failure)
    expect(error.message).toBe(
      'The PostgreSQL store needs the optional peer dependency "pg": install it (npm install pg).',
    )
    expect(error.cause).toBe(failure)
    expect(isModuleNotFound(new Error('other'))).toBe(false)
  })
})
