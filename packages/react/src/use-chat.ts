import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react'
import { ChatRuntime } from './core/chat-runtime.ts'
import { randomId } from './core/immutable.ts'
import type { ChatRuntimeOptions, ChatSnapshot } from './core/types.ts'

/** Options of `useChat`: the runtime options. Callbacks and headers always use their latest value. */
export type UseChatOptions<TState = unknown> = ChatRuntimeOptions<TState>

/** The runtime's commands `useChat` hands out (bound methods: stable identities). */
const COMMANDS = [
  'sendMessage',
  'cancelQueued',
  'reload',
  'stop',
  'setMessages',
  'setState',
  'resume',
  'restoreConversation',
  'recover',
  'acceptLocalHistory',
  'getRecoveryConfiguration',
  'setThreadId',
  'newThread',
  'settleToolCalls',
  'reconcileEffect',
  'editMessage',
  'regenerate',
  'switchBranch',
  'loadBranches',
] as const satisfies readonly (keyof ChatRuntime)[]

/** The command methods of a runtime, as `useChat` returns them. */
export type ChatCommands<TState = unknown> = Pick<ChatRuntime<TState>, (typeof COMMANDS)[number]>

/** Everything `useChat` returns: the snapshot plus the runtime's (identity-stable) commands. */
export type UseChatResult<TState = unknown> = ChatSnapshot<TState> &
  ChatCommands<TState> & {
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

  return useMemo(() => {
    const commands = Object.fromEntries(COMMANDS.map((name) => [name, runtime[name]])) as ChatCommands<TState>
    return { ...snapshot, ...commands, runtime }
  }, [snapshot, runtime])
}
