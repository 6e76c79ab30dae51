import type { SubagentActivity } from '@interlude/react'
import { subagentText, subagentToolCalls } from '@interlude/react'

const STATUS_TEXT = {
  running: 'working…',
  interrupted: 'waiting for an answer',
  finished: 'done',
  failed: 'failed',
} as const

/**
 * What one subagent did (docs/client-contract.md#subagents), attributed to it ("auditor: …") and collapsed by default
 * under the parent's tool call that runs it: its text so far and its tool calls. Everything is rendered as text.
 */
export function SubagentActivityView({ activity }: { readonly activity: SubagentActivity }) {
  const { agent, status } = activity
  const text = subagentText(activity)
  const toolCalls = subagentToolCalls(activity)
  return (
    <details
      className={`subagent-activity subagent-${status}`}
      data-subagent-run-id={activity.subagentRunId}
      data-status={status}
    >
      <summary>
        <span className="subagent-name">{agent}</span> · {STATUS_TEXT[status] ?? status}
        {toolCalls.length > 0 ? ` · ${toolCalls.length} tool call${toolCalls.length === 1 ? '' : 's'}` : ''}
      </summary>
      {text !== '' && (
        <p className="subagent-text">
          <strong>{agent}:</strong> {text}
        </p>
      )}
      {toolCalls.length > 0 && (
        <ul className="subagent-tools" aria-label={`${agent}'s tool calls`}>
          {toolCalls.map((call) => (
            <li key={call.toolCallId} data-tool-call-id={call.toolCallId}>
              <code>{call.toolName}</code> <code className="muted">{call.args || '{}'}</code>
              {call.result !== undefined && (
                <>
                  {' → '}
                  <code>{call.result}</code>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </details>
  )
}
