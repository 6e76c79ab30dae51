// One AG-UI run against a started interlude-server, as an outsider's script would send it: `node run-once.mjs URL
// TEXT EXPECTED` posts TEXT on a new thread and checks that the stream finishes and its text contains EXPECTED.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { decodeEvents } from '@interlude/protocol/sse'

const [url, text, expected] = process.argv.slice(2)
const response = await fetch(`${url}/api/agent/runs`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
  body: JSON.stringify({
    threadId: `consumer_${randomUUID()}`,
    runId: `run_${randomUUID()}`,
    messages: [{ id: `user_${randomUUID()}`, role: 'user', content: text }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
  }),
})
assert.equal(response.status, 200, await response.clone().text())
let said = ''
let finished = false
for await (const { event } of decodeEvents(response.body)) {
  if (event.type === 'TEXT_MESSAGE_CONTENT') said += event.delta
  if (event.type === 'RUN_ERROR') assert.fail(`RUN_ERROR ${JSON.stringify(event)}`)
  if (event.type === 'RUN_FINISHED') finished = true
}
assert.ok(finished, 'the run did not finish')
assert.ok(said.includes(expected), `expected "${expected}" in "${said}"`)
console.log(`run finished: "${said.slice(0, 60)}"`)
