// An agent module for `interlude-server --agent` (e2e only): the release assistant (docs/demo-agent.md) whose
// scripted model also calls the workbench's browser tool `read_page_context`.
//
// - "check the page and deploy v2.1": ONE response with both a browser-tool call and the `deploy` call that needs
//   approval (the mixed response of docs/client-contract.md#browser-tools): the run pauses on the approval, the
//   browser call waits for the client.
// - "check the page": a browser-tool call alone: the run ends with `pendingToolCallIds` (a reload then offers it).
// Everything else is the release assistant's script; its summary names the browser call "read_page_context
// finished".
import { releaseAssistant, releaseAssistantScript } from '@interlude/agent-server/demo'
import { scriptedModel } from '@interlude/agent-server'

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m.role === 'user') return { index: i, text: typeof m.content === 'string' ? m.content : '' }
  }
  return { index: -1, text: '' }
}

function script(request) {
  const { index, text } = lastUserText(request.messages)
  const toolsSince = request.messages.slice(index + 1).some((m) => m.role === 'tool')
  if (!toolsSince && /check the page/i.test(text)) {
    const browserCall = { name: 'read_page_context', args: {} }
    if (/deploy/i.test(text))
      return {
        text: 'I will read your page, then deploy v2.1 to staging (that needs your approval).',
        toolCalls: [browserCall, { name: 'deploy', args: { version: 'v2.1', environment: 'staging' } }],
      }
    return { text: 'Let me read your page.', toolCalls: [browserCall] }
  }
  return releaseAssistantScript(request)
}

export default function agent() {
  return { ...releaseAssistant(), model: scriptedModel(script, { pacingMs: 0 }) }
}
