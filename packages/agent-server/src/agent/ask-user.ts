import type { ExpiryPolicy } from '@interlude/protocol'
import type { JsonSchema, ToolDefinition } from './tool.ts'

export interface AskUserOptions {
  /** @default 'ask_user' */
  readonly name?: string
  /** @default 'Ask the user a question and wait for a structured answer.' */
  readonly description?: string
  /** JSON Schema of the answer the person gives (the interrupt's `responseSchema`). */
  readonly responseSchema: JsonSchema
  /** Seconds the person has to answer (docs/approvals.md#deadlines). @default the server's `interruptTtlSeconds` */
  readonly timeout?: number
  /**
   * What happens when nobody answered in time. `deny` and `cancel` both cancel a question (there is no "no" to it);
   * `keep` leaves it open until an all-cancelled resume closes it. @default the server's `onExpiry`, else `cancel`
   */
  readonly onExpiry?: ExpiryPolicy
}

interface AskUserArgs {
  readonly question: string
}

/**
 * A human tool: when the model calls it, the run pauses with an `input_required` interrupt whose
 * `responseSchema` is the caller's; the validated answer becomes the tool result.
 * @example
 * askUser({ responseSchema: { type: 'object', properties: { environment: { type: 'string', enum: ['staging', 'production'] } }, required: ['environment'], additionalProperties: false } })
 */
export function askUser(options: AskUserOptions): ToolDefinition<AskUserArgs> {
  return {
    name: options.name ?? 'ask_user',
    description: options.description ?? 'Ask the user a question and wait for a structured answer.',
    parameters: {
      type: 'object',
      properties: { question: { type: 'string', minLength: 1, maxLength: 2000 } },
      required: ['question'],
      additionalProperties: false,
    },
    human: {
      responseSchema: options.responseSchema,
      message: (args) => args.question,
    },
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.onExpiry !== undefined ? { onExpiry: options.onExpiry } : {}),
  }
}
