import type { Message } from '@interlude/protocol'
import { clientError } from './errors.ts'
import { deepFreeze, frozenJsonCopy } from './immutable.ts'
import type { SendMessageInput } from './types.ts'

/** The frozen user message of `sendMessage`'s input (`INVALID_INPUT` without string or array content). */
export function userMessage(input: string | SendMessageInput, generateId: () => string): Message {
  const content = typeof input === 'string' ? input : input?.content
  if (typeof content !== 'string' && !Array.isArray(content))
    throw clientError('INVALID_INPUT', 'A message needs string or array content.')
  const id = typeof input === 'object' && input.id !== undefined ? input.id : generateId()
  return deepFreeze({
    id,
    role: 'user',
    content: Array.isArray(content) ? frozenJsonCopy(content) : content,
  }) as Message
}
