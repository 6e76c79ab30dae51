import type { JsonSchema, ToolDefinition } from './tool.ts'

export interface AskUserOptions {
  /** @default 'ask_user' */
  readonly name?: string
  /** @default 'Ask the user a question and wait for a structured answer.' */
  readonly description?: string
  /** JSON Schema of the answer the person gives (the interrupt's `responseSchema`). */
  readonly responseSchema: JsonSchema
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
  }
}
