import { describe, expect, it } from 'vitest'
import { SetupError } from '../optional-peer.ts'
import { loadSqlite, sqliteLoadError, sqliteVersionProblem } from './sqlite-module.ts'

describe('the better-sqlite3 loader', () => {
  it('loads the installed driver on this Node', () => {
    expect(typeof loadSqlite()).toBe('function')
  })

  it('says what to install when better-sqlite3 13 meets Node 20, instead of crashing', () => {
    const problem = sqliteVersionProblem('13.2.0', '20.20.2')
    expect(problem).toContain('needs Node.js 22 or newer')
    expect(problem).toContain('npm install better-sqlite3@^12.11.1')
  })

  it('accepts each major on the Node versions it runs on', () => {
    expect(sqliteVersionProblem('12.11.1', '20.20.2')).toBeUndefined()
    expect(sqliteVersionProblem('12.11.1', '24.1.0')).toBeUndefined()
    expect(sqliteVersionProblem('13.2.0', '22.12.0')).toBeUndefined()
    expect(sqliteVersionProblem('13.2.0', '24.1.0')).toBeUndefined()
  })

  it('turns a blocked build script into the command that approves it', () => {
    const error = sqliteLoadError(
      new Error('Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node'),
    )
    expect(error).toBeInstanceOf(SetupError)
    expect(error.message).toContain('pnpm approve-builds')
    expect(error.cause).toBeInstanceOf(Error)
  })

  it('turns an ABI mismatch into a rebuild', () => {
    const abi = Object.assign(
      new Error('was compiled against a different Node.js version using NODE_MODULE_VERSION 127'),
      {
        code: 'ERR_DLOPEN_FAILED',
      },
    )
    expect(sqliteLoadError(abi).message).toContain('npm rebuild better-sqlite3')
  })

  it('passes anything else through unchanged', () => {
    const other = new Error('something else')
    expect(sqliteLoadError(other)).toBe(other)
  })
})
