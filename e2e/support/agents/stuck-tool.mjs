// An agent module for `interlude-server --agent` (e2e only): the release assistant (docs/demo-agent.md) plus a tool
// whose effect never finishes, so a test can kill the server while it runs and meet an effect whose outcome is
// unknown (docs/architecture.md, "Durable continuation").
//
// - "sync the inventory": calls `sync_inventory` (no approval). Its `execute` appends a line to a marker file named after
//   the thread in `$INTERLUDE_E2E_MARKERS` (the test waits for it: the effect has started), then never returns.
// Everything else is the release assistant's script.
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { releaseAssistant, releaseAssistantScript } from '@interlude/agent-server/demo'
import { scriptedModel } from '@interlude/agent-server'

function script(request) {
  const last = request.messages[request.messages.length - 1]
  if (last?.role === 'user' && /sync the inventory/i.test(typeof last.content === 'string' ? last.content : ''))
    return { text: 'Syncing the inventory.', toolCalls: [{ name: 'sync_inventory', args: {} }] }
  if (last?.role === 'tool') return { text: 'The inventory step is settled.' }
  return releaseAssistantScript(request)
}

const syncInventory = {
  name: 'sync_inventory',
  description: 'Sync the inventory with the warehouse.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  execute: (_args, ctx) => {
    appendFileSync(join(process.env.INTERLUDE_E2E_MARKERS ?? '/tmp', `started-${ctx.threadId}`), `${ctx.toolCallId}\n`)
    return new Promise(() => {}) // never settles: the process is killed while it runs
  },
}

export default function agent() {
  const base = releaseAssistant()
  return { ...base, tools: [...(base.tools ?? []), syncInventory], model: scriptedModel(script, { pacingMs: 0 }) }
}
