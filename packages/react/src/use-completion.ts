import { useEffect, useMemo, useState, useSyncExternalStore } from 'react'
import { CompletionInput } from './core/completion-input.ts'
import { useChat, type UseChatOptions, type UseChatResult } from './use-chat.ts'

export interface UseCompletionResult<TState = unknown> extends UseChatResult<TState> {
  /** The latest input held back by a pause, a resume, a running turn or recovery. */
  readonly deferredInput: string | undefined
}

/**
 * Completion-style chat: each new `input` value is sent as a user message. While the conversation
 * is paused, resuming, running or in recovery, input changes are deferred (A→B→C during a pause
 * still resumes A) and only the latest one is sent after an interaction succeeds.
 */
export function useCompletion<TState = unknown>(
  input: string | undefined,
  options: UseChatOptions<TState> = {},
): UseCompletionResult<TState> {
  const chat = useChat(options)
  const runtime = chat.runtime
  const [completion] = useState(() => new CompletionInput(runtime))
  useEffect(() => completion.connect(), [completion])
  useEffect(() => completion.setInput(input), [completion, input])
  const deferredInput = useSyncExternalStore(completion.subscribe, completion.getDeferred, () => undefined)
  return useMemo(() => ({ ...chat, deferredInput }), [chat, deferredInput])
}
