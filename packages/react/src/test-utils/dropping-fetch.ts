/**
 * A fetch that cuts the first POST /runs response (only a resume's with `resumeOnly`) after `keepFrames` complete SSE
 * frames plus half a frame, the wire dying mid-frame; `requests` lists every request (paths relative to `baseUrl`).
 */
export function droppingFetch(baseUrl: string, keepFrames: number, { resumeOnly = false } = {}) {
  let cut = false
  const requests: string[] = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const url = String(input)
    const isResume = typeof init?.body === 'string' && init.body.includes('"resume"')
    requests.push(`${init?.method ?? 'GET'} ${url.replace(baseUrl, '')}${isResume ? ' (resume)' : ''}`)
    const res = await globalThis.fetch(input, init)
    if (cut || !url.endsWith('/runs') || !res.body || (resumeOnly && !isResume)) return res
    cut = true
    const upstream = res.body.getReader()
    let text = ''
    const decoder = new TextDecoder()
    const encoder = new TextEncoder()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          const { done, value } = await upstream.read()
          if (done) break
          text += decoder.decode(value, { stream: true })
          let boundary = -1
          for (let i = 0; i < keepFrames; i++) boundary = text.indexOf('\n\n', boundary + 1)
          if (boundary < 0) continue
          const next = text.indexOf('\n\n', boundary + 2)
          if (next < 0) continue
          // Everything up to the frame boundary, then half of the next frame, then the wire dies.
          controller.enqueue(encoder.encode(text.slice(0, boundary + 2 + Math.floor((next - boundary) / 2))))
          void upstream.cancel()
          controller.error(new TypeError('terminated'))
          return
        }
        controller.error(new TypeError('terminated early'))
      },
    })
    return new Response(body, { status: res.status, headers: res.headers })
  }
  return { requests, fetch: fetchImpl }
}
