import type { Message } from '@ag-ui/core'

/**
 * The text of a message, for display. AG-UI content is a string, an array of parts (text, images,
 * files…) or absent; `String(m.content)` would print `[object Object]` for parts. Text parts are
 * joined with a newline; other parts and absent content give nothing.
 */
export function messageText(message: Pick<Message, 'content'> | { readonly content?: unknown }): string {
  const content: unknown = message.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const texts: string[] = []
  for (const part of content as unknown[]) {
    if (typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text') {
      const text = (part as { text?: unknown }).text
      if (typeof text === 'string') texts.push(text)
    }
  }
  return texts.join('\n')
}
