/** The live thread is kept in the page URL (`?thread=<id>`) so that a reload can recover it. */
export function threadFromUrl(): string | undefined {
  const id = new URLSearchParams(window.location.search).get('thread')
  return id !== null && /^[\w.:-]{1,200}$/.test(id) ? id : undefined
}

export function writeThreadToUrl(threadId: string): void {
  const url = new URL(window.location.href)
  if (url.searchParams.get('thread') === threadId) return
  url.searchParams.set('thread', threadId)
  url.searchParams.delete('replay')
  window.history.replaceState(null, '', url)
}
