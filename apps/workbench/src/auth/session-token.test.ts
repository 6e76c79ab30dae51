// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest'
import { adoptTokenFromUrl, authHeaders, readToken, writeToken } from './session-token.ts'

afterEach(() => {
  writeToken(undefined)
  window.history.replaceState(null, '', '/')
})

describe('the session token', () => {
  it('moves ?token= into session storage and out of the address', () => {
    window.history.replaceState(null, '', '/?token=mgr-secret&view=approvals')
    adoptTokenFromUrl()
    expect(readToken()).toBe('mgr-secret')
    expect(window.sessionStorage.getItem('interlude.workbench.token')).toBe('mgr-secret')
    expect(window.localStorage.length).toBe(0)
    expect(window.location.search).toBe('?view=approvals')
    expect(authHeaders()).toEqual({ Authorization: 'Bearer mgr-secret' })
  })

  it('drops a token that cannot travel in a header, and sends nothing without one', () => {
    window.history.replaceState(null, '', '/?token=' + encodeURIComponent('two words'))
    adoptTokenFromUrl()
    expect(readToken()).toBeUndefined()
    expect(window.location.search).toBe('')
    expect(authHeaders()).toEqual({})
  })

  it('signs out', () => {
    writeToken('eng-secret')
    expect(authHeaders()).toEqual({ Authorization: 'Bearer eng-secret' })
    writeToken(undefined)
    expect(readToken()).toBeUndefined()
  })
})
