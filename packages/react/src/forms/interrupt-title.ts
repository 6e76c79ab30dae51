import type { Interrupt, Message } from '@interlude/protocol'
import { toolCallOf } from './tool-call.ts'

const MAX_ARGS = 120

/** Compact, single-line arguments (`{"env":"prod"}`), cut at 120 characters. */
function summarize(args: string | undefined): string | undefined {
  if (args === undefined || args.trim() === '' || args.trim() === '{}') return undefined
  let text = args
  try {
    text = JSON.stringify(JSON.parse(args))
  } catch {
    // Not JSON: shown as it is.
  }
  return text.length > MAX_ARGS ? `${text.slice(0, MAX_ARGS - 1)}…` : text
}

/**
 * The heading of one interrupt in a form: the server's `message`; for a tool call without one, the
 * tool's name and arguments (`Run deploy with {"env":"prod"}?`), never the raw reason `tool_call`.
 */
export function interruptTitle(interrupt: Interrupt, messages?: readonly Message[]): string {
  if (typeof interrupt.message === 'string' && interrupt.message !== '') return interrupt.message
  const { name, args } = toolCallOf(interrupt, messages)
  const summary = summarize(args)
  if (name !== undefined) return summary === undefined ? `Run ${name}?` : `Run ${name} with ${summary}?`
  if (interrupt.reason === 'tool_call') return 'Run a tool call?'
  // A question without a message is named by its schema's title before falling back to the reason.
  const title = (interrupt.responseSchema as { title?: unknown } | undefined)?.title
  if (typeof title === 'string' && title.trim() !== '') return title
  return interrupt.reason
}
