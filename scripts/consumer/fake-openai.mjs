// A local OpenAI-compatible chat-completions server for the consumer test: every request is answered with one
// streamed text reply (only the model's answer is scripted). Prints its base URL, then serves until killed.
import http from 'node:http'

const frame = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

const server = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    if (!req.url?.endsWith('/chat/completions')) return res.writeHead(404).end()
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    res.write(frame({ role: 'assistant', content: 'Hello from ' }))
    res.write(frame({ content: 'the fake model.' }))
    res.write(frame({}, 'stop'))
    res.end('data: [DONE]\n\n')
  })
})
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/v1`))
