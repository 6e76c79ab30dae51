import type { Interrupt, Message } from '@interlude/protocol'

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The call an interrupt is about as the history has it (`toolCallId`), if it is there. */
function callInHistory(interrupt: Interrupt, messages: readonly Message[] | undefined) {
  if (interrupt.toolCallId === undefined) return undefined
  for (const m of messages ?? []) {
    if (m.role !== 'assistant' || !m.toolCalls) continue
    const call = m.toolCalls.find((c) => c.id === interrupt.toolCallId)
    if (call) return call
  }
  return undefined
}

const metadataOf = (interrupt: Interrupt): Record<string, unknown> =>
  isRecord(interrupt.metadata) ? interrupt.metadata : {}

/**
 * The tool call an interrupt is about: its name and raw arguments from the history (`toolCallId`), else from its
 * metadata. Interlude's server names every approval's call there (`toolName`, `arguments`); other servers often use
 * `toolCallName`, `name` or `args`.
 */
export function toolCallOf(
  interrupt: Interrupt,
  messages: readonly Message[] | undefined,
): { name: string | undefined; args: string | undefined } {
  const call = callInHistory(interrupt, messages)
  if (call) return { name: call.function.name, args: call.function.arguments }
  const meta = metadataOf(interrupt)
  const name = [meta.toolName, meta.toolCallName, meta.name].find((v): v is string => typeof v === 'string')
  const args = meta.arguments ?? meta.args
  return { name, args: args === undefined ? undefined : typeof args === 'string' ? args : JSON.stringify(args) }
}

/** The call's arguments from the metadata (`arguments`/`args`): parsed when a JSON string, else as they are. */
function metadataArguments(interrupt: Interrupt): unknown {
  const meta = metadataOf(interrupt)
  const args = meta.arguments ?? meta.args
  if (typeof args !== 'string') return args
  try {
    return JSON.parse(args) as unknown
  } catch {
    return args
  }
}

/**
 * The original arguments of the call an interrupt is about, parsed: from the history, else from the interrupt's
 * metadata (docs/client-contract.md#form-helpers). Undefined when neither has them.
 */
export function toolArgsOf(interrupt: Interrupt, messages: readonly Message[] | undefined): unknown {
  const call = callInHistory(interrupt, messages)
  if (call) {
    try {
      return JSON.parse(call.function.arguments || '{}') as unknown
    } catch {
      // Still streaming or not JSON: the metadata may have them whole.
    }
  }
  return metadataArguments(interrupt)
}
