import { MockLanguageModelV3 } from 'ai/test'
import { deployArgs } from '../langgraph/scripted-chat-model.ts'

type Prompt = MockLanguageModelV3['doStreamCalls'][number]['prompt']
type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>
type LanguageModelV3StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** What the scripted model says to a prompt: a `deploy` call after a user message, the tool's result after it. */
function answer(prompt: Prompt): LanguageModelV3StreamPart[] {
  const last = prompt.at(-1)
  if (last?.role === 'tool') {
    const result = last.content.find((part) => part.type === 'tool-result')
    const output = result?.output.type === 'json' ? JSON.stringify(result.output.value) : 'no result'
    return [
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: `Result: ${output}` },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ]
  }
  const text = last?.role === 'user' ? last.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : ''
  return [
    {
      type: 'tool-call',
      toolCallId: `call_${prompt.length}`,
      toolName: 'deploy',
      input: JSON.stringify(deployArgs(text)),
    },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
  ]
}

/** The AI SDK's mock model (no network), scripted by the prompt so every run and resume answers the same. */
export function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] })
          for (const part of answer(prompt)) controller.enqueue(part)
          controller.close()
        },
      }),
    }),
  })
}
