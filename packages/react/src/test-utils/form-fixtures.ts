import type { Message } from '@interlude/protocol'
import { deepFreeze } from '../core/immutable.ts'
import type { PendingInterruptBatch } from '../core/types.ts'

/** Batches and history shared by the form tests (deep-frozen like the runtime publishes them). */

export const approval = (args?: object) => ({
  type: 'object',
  properties: { approved: { type: 'boolean' }, ...(args ? { editedArgs: args } : {}), reason: { type: 'string' } },
  required: ['approved'],
  additionalProperties: false,
})
export const deployArgs = {
  type: 'object',
  properties: {
    version: { type: 'string', minLength: 1 },
    environment: { type: 'string', enum: ['staging', 'production'] },
    replicas: { type: 'integer', minimum: 1 },
  },
  required: ['version', 'environment'],
  additionalProperties: false,
}
export const releaseBatch = (id = 'b-1'): PendingInterruptBatch =>
  deepFreeze({
    id,
    interrupts: [
      {
        id: 'i-pub',
        reason: 'tool_call',
        toolCallId: 'c-pub',
        message: 'Publish release v2.1?',
        responseSchema: approval(),
      },
      {
        id: 'i-dep',
        reason: 'tool_call',
        toolCallId: 'c-dep',
        message: 'Deploy v2.1 to staging?',
        responseSchema: approval(deployArgs),
      },
    ],
  })
export const askBatch = (id = 'b-ask'): PendingInterruptBatch =>
  deepFreeze({
    id,
    interrupts: [
      {
        id: 'i-ask',
        reason: 'input_required',
        message: 'Which environment?',
        responseSchema: {
          type: 'object',
          properties: {
            environment: { type: 'string', enum: ['staging', 'production'] },
            notes: { type: 'string' },
            urgent: { type: 'boolean' },
            window: { type: 'object', properties: { hours: { type: 'number' } } },
          },
          required: ['environment'],
          additionalProperties: false,
        },
      },
    ],
  })
export const history: Message[] = [
  {
    id: 'a1',
    role: 'assistant',
    content: 'Plan',
    toolCalls: [
      { id: 'c-pub', type: 'function', function: { name: 'publish_release', arguments: '{"version":"v2.1"}' } },
      {
        id: 'c-dep',
        type: 'function',
        function: { name: 'deploy', arguments: '{"version":"v2.1","environment":"staging"}' },
      },
    ],
  },
]
