/**
 * The bearer token the workbench sends when the server runs with `--token name=secret` (docs/approvals.md: a
 * manager and an engineer are two principals). Without a token the server's anonymous-session cookie is used, as
 * before. The token lives in `sessionStorage` (this tab only, gone when it closes), never in `localStorage`; a
 * `?token=` in the address is taken once at start and removed from the address at once, so it is not left in the
 * history or in a copied link.
 */
const KEY = 'interlude.workbench.token'

/** Tokens are opaque, but only printable ASCII without spaces can travel in `Authorization: Bearer …`. */
export function isUsableToken(token: string): boolean {
  return /^[\x21-\x7e]{1,512}$/.test(token)
}

function storage(): Storage | undefined {
  try {
    return typeof window === 'undefined' ? undefined : window.sessionStorage
  } catch {
    return undefined // storage disabled (privacy mode): the token then lives for this page only
  }
}

let memory: string | undefined

export function readToken(): string | undefined {
  const stored = storage()?.getItem(KEY) ?? memory
  return stored !== undefined && stored !== null && isUsableToken(stored) ? stored : undefined
}

export function writeToken(token: string | undefined): void {
  memory = token
  const store = storage()
  if (token === undefined) store?.removeItem(KEY)
  else store?.setItem(KEY, token)
}

/** Moves `?token=` from the address into session storage (called once, before anything is fetched). */
export function adoptTokenFromUrl(): void {
  if (typeof window === 'undefined') return
  const url = new URL(window.location.href)
  const token = url.searchParams.get('token')
  if (token === null) return
  if (isUsableToken(token)) writeToken(token)
  url.searchParams.delete('token')
  window.history.replaceState(null, '', url)
}

/** `Authorization` for the current token, or nothing (the cookie session). Read before every request. */
export function authHeaders(): Record<string, string> {
  const token = readToken()
  return token === undefined ? {} : { Authorization: `Bearer ${token}` }
}
