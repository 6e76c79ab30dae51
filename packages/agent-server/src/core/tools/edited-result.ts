import { parseJson } from '../strict-json.ts'

/**
 * The result of a call a person edited before approving (docs/decisions.md#the-model-boundary): the model's own `tool_calls`
 * still show what it proposed, so the result says explicitly that the call ran with other arguments,
 * and which (docs/approvals.md#edited-arguments).
 */
export function editedResult(args: unknown, result: unknown): unknown {
  return {
    note: 'A person edited the arguments before approving this call. It ran with editedArguments, not with the arguments you proposed.',
    editedArguments: args,
    // The ledger hands results over as the text the model reads: nest JSON as JSON, not as a string.
    result: typeof result === 'string' ? jsonOrText(result) : result,
  }
}

function jsonOrText(text: string): unknown {
  const parsed = parseJson(text)
  return parsed.ok ? parsed.value : text
}
