/**
 * The SSE line parser of the HTML event-stream algorithm, over text already decoded from UTF-8 (TextDecoder strips
 * the BOM): CR, LF and CRLF line ends (also split across chunks), multi-line `data:`, `event:`, `id:` (ignored when
 * it holds NUL), `retry:` (digits only), comments, unknown fields ignored. An event is dispatched only when it has
 * data. Own code rather than a dependency to keep the browser bundle small (docs/decisions.md#libraries).
 */

export interface SseParsedEvent {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

export interface SseLineParserOptions {
  readonly onEvent: (event: SseParsedEvent) => void
  readonly onComment?: ((comment: string) => void) | undefined
  readonly onRetry?: ((ms: number) => void) | undefined
  /** Called once when a partial line plus the event's data exceed `maxBufferSize`; the parser then stops. */
  readonly onOverflow: () => void
  readonly maxBufferSize: number
}

export function createSseLineParser(options: SseLineParserOptions): { feed(text: string): void } {
  const { onEvent, onComment, onRetry, onOverflow, maxBufferSize } = options
  // `\r` alone is a line end, so a chunk ending in `\r` waits for the next one (it may be the first half of `\r\n`).
  const lineEnd = /\r\n|\r|\n/g
  let pending = ''
  let id: string | undefined
  let event: string | undefined
  let data = ''
  let dataLines = 0
  let stopped = false

  const line = (text: string): void => {
    if (text === '') {
      if (dataLines > 0) onEvent({ id, event, data })
      id = undefined
      event = undefined
      data = ''
      dataLines = 0
      return
    }
    const colon = text.indexOf(':')
    if (colon === 0) {
      onComment?.(text.slice(text.charCodeAt(1) === 32 ? 2 : 1))
      return
    }
    const field = colon < 0 ? text : text.slice(0, colon)
    const value = colon < 0 ? '' : text.slice(text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1)
    if (field === 'data') data = dataLines++ === 0 ? value : `${data}\n${value}`
    else if (field === 'event') event = value || undefined
    else if (field === 'id') id = value.includes('\0') ? id : value
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry?.(parseInt(value, 10))
  }

  const checkSize = (): void => {
    if (pending.length + data.length <= maxBufferSize) return
    stopped = true
    pending = ''
    data = ''
    onOverflow()
  }

  return {
    feed(chunk) {
      if (stopped) return
      // A chunk without a line end only extends the partial line: no rescan of what is buffered.
      if (pending !== '' && !chunk.includes('\n') && !chunk.includes('\r')) {
        pending += chunk
        checkSize()
        return
      }
      const text = pending + chunk
      let start = 0
      lineEnd.lastIndex = 0
      for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
        if (match[0] === '\r' && match.index === text.length - 1) break
        line(text.slice(start, match.index))
        start = lineEnd.lastIndex
      }
      pending = text.slice(start)
      checkSize()
    },
  }
}
