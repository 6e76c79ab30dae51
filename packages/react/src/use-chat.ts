import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react'
import { ChatRuntime } from './core/chat-runtime.ts'
import { randomId } from './core/immutable.ts'
import type { ChatRuntimeOptions, ChatSnapshot } from './core/types.ts'

/** Options of `useChat`: the runtime options. Callbacks and headers always use their latest value. */
export type UseChatOptions<TState = unknown> = ChatRuntimeOptions<TState>

/** Everything `useChat` returns: the snapshot plus the runtime's (identity-stable) commands. */
export interface UseChatResult<TState = unknown> extends ChatSnapshot<TState> {
  readonly sendMessage: ChatRuntime<TState>['sendMessage']
  readonly reload: ChatRuntime<TState>['reload']
  readonly stop: ChatRuntime<TState>['stop']
  readonly setMessages: ChatRuntime<TState>['setMessages']
  readonly setState: ChatRuntime<TState>['setState']
  readonly resume: ChatRuntime<TState>['resume']
  readonly restoreConversation: ChatRuntime<TState>['restoreConversation']
  readonly recover: ChatRuntime<TState>['recover']
  readonly getRecoveryConfiguration: ChatRuntime<TState>['getRecoveryConfiguration']
  readonly setThreadId: ChatRuntime<TState>['setThreadId']
  readonly newThread: ChatRuntime<TState>['newThread']
  /** The underlying runtime (for advanced use: subscribe outside React, tests). */
  readonly runtime: ChatRuntime<TState>
}

/**
 * The chat hook: a thin binding of a `ChatRuntime` to React.
 *
 * - The runtime is created once per component instance (`useState` initializer, no side effects,
 *   so StrictMode's double render is harmless) and disposed shortly after the last unmount.
 * - State is read with `useSyncExternalStore`; the server snapshot is the initial one (SSR).
 * - Options are pushed to the runtime after commit; `threadId` only when its value changes
 *   (a different id retires the batch; the same id resets nothing).
 * - Commands are the runtime's bound methods: stable identities, synchronous typed rejections.
 */
export function useChat<TState = unknown>(options: UseChatOptions<TState> = {}): UseChatResult<TState> {
  const [runtime] = useState(() => new ChatRuntime<TState>(options))
  const snapshot = useSyncExternalStore(runtime.subscribe, runtime.getSnapshot, runtime.getServerSnapshot)

  // Latest options (callbacks, headers, tools) after every commit.
  useEffect(() => {
    const { threadId: _threadId, ...rest } = options
    runtime.updateOptions(rest)
  })

  const threadOption = options.threadId
  const forwardedThread = useRef(threadOption)
  useEffect(() => {
    if (forwardedThread.current === threadOption) return
    forwardedThread.current = threadOption
    runtime.setThreadId(threadOption ?? randomId())
  }, [runtime, threadOption])

  useEffect(() => runtime.retain(), [runtime])

  return useMemo(
    () => ({
      ...snapshot,
      sendMessage: runtime.sendMessage,
      reload: runtime.reload,
      stop: runtime.stop,
      setMessages: runtime.setMessages,
      setState: runtime.setState,
      resume: runtime.resume,
      restoreConversation: runtime.restoreConversation,
      recover: runtime.recover,
      getRecoveryConfiguration: runtime.getRecoveryConfiguration,
      setThreadId: runtime.setThreadId,
      newThread: runtime.newThread,
      runtime,
    }),
    [snapshot, runtime],
  )
}
