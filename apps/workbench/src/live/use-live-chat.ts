import { ChatRuntime } from '@interlude/react/core'
import type { ChatSnapshot } from '@interlude/react/core'
import { useEffect, useState, useSyncExternalStore } from 'react'
import { projectSnapshot } from '../recording/project-snapshot.ts'
import type { Recorder } from '../recording/recorder.ts'
import { createRecordingFetch } from '../recording/recording-fetch.ts'

/**
 * The live chat runtime of the workbench, with every request going through the recording fetch
 * and every snapshot change recorded (a direct subscription, so no change is coalesced away by
 * React's batching).
 */
export function useLiveChat(recorder: Recorder, initialThreadId: string | undefined): { runtime: ChatRuntime; chat: ChatSnapshot } {
  const [runtime] = useState(
    () =>
      new ChatRuntime({
        ...(initialThreadId === undefined ? {} : { threadId: initialThreadId }),
        api: '/api/agent',
        credentials: 'same-origin',
        fetch: createRecordingFetch(recorder),
      }),
  )
  useEffect(() => {
    const record = () => recorder.addSnapshot(projectSnapshot(runtime.getSnapshot()))
    record()
    return runtime.subscribe(record)
  }, [runtime, recorder])
  const chat = useSyncExternalStore(runtime.subscribe, runtime.getSnapshot, runtime.getServerSnapshot)
  return { runtime, chat }
}
