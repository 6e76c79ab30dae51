import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'

/**
 * A scripted chat model (no network): after a user message it calls `deploy` with the version and environment the
 * message names; after the tool's result it says that result. It decides from the messages alone, so it answers the
 * same in every run and process.
 */
export class ScriptedChatModel extends BaseChatModel {
  _llmType(): string {
    return 'interlude-scripted'
  }

  override bindTools(): this {
    return this
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1)
    const message = ToolMessage.isInstance(last)
      ? new AIMessage({ content: `Result: ${String(last.content)}` })
      : new AIMessage({
          content: '',
          tool_calls: [
            { id: `call_${messages.length}`, name: 'deploy', args: deployArgs(String(last?.content ?? '')) },
          ],
        })
    return { generations: [{ text: String(message.content), message }] }
  }
}

/** `deploy v2.1 to staging` → `{ version: 'v2.1', environment: 'staging' }` (production unless named). */
export function deployArgs(text: string): { version: string; environment: string } {
  const version = /v\d+(\.\d+)*/.exec(text)?.[0] ?? 'v1'
  const environment = /\bto (\w+)/.exec(text)?.[1] ?? 'production'
  return { version, environment }
}
