import { useState } from 'react'
import { isUsableToken, readToken, writeToken } from './session-token.ts'

export interface SignInProps {
  /** Called after the token changed (the live session then starts again with it). */
  readonly onChange: () => void
  readonly disabled?: boolean
}

/**
 * "Sign in with a token" for servers started with `--token name=secret`. The token is kept for this tab only
 * (sessionStorage) and sent as `Authorization: Bearer …`; without one, the server's anonymous cookie session is used.
 */
export function SignIn({ onChange, disabled = false }: SignInProps) {
  const [token, setToken] = useState(readToken)
  const [draft, setDraft] = useState('')
  if (token !== undefined) {
    return (
      <span className="sign-in" data-testid="signed-in">
        Signed in with a token
        <button
          type="button"
          className="link"
          disabled={disabled}
          onClick={() => {
            writeToken(undefined)
            setToken(undefined)
            onChange()
          }}
        >
          sign out
        </button>
      </span>
    )
  }
  return (
    <form
      className="sign-in"
      onSubmit={(e) => {
        e.preventDefault()
        const value = draft.trim()
        if (!isUsableToken(value)) return
        writeToken(value)
        setToken(value)
        setDraft('')
        onChange()
      }}
    >
      <label htmlFor="sign-in-token" className="visually-hidden">
        Token
      </label>
      <input
        id="sign-in-token"
        type="password"
        autoComplete="off"
        placeholder="token (optional)"
        value={draft}
        disabled={disabled}
        onChange={(e) => setDraft(e.target.value)}
      />
      <button type="submit" disabled={disabled || !isUsableToken(draft.trim())}>
        Sign in
      </button>
    </form>
  )
}
