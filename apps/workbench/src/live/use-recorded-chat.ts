import { useChat } from '@interlude/react'
import type { UseChatResult } from '@interlude/react'
import { useEffect, useState } from 'react'
import { projectSnapshot } from '../recording/project-snapshot.ts'
import type { Recorder } from '../recording/recorder.ts'
import { createRecordingFetch } from '../recording/recording-fetch.ts'

/**
 * `useChat` for the live workbench: every request goes through the recording fetch (requests,
 * outcomes and SSE events with their receive time), and every snapshot change is recorded through
 * a direct subscription to the runtime (so React's batching cannot coalesce changes away).
 */
export function useRecordedChat(recorder: Recorder, initialThreadId: string | undefined): UseChatResult {
  const [recordingFetch] = useState(() => createRecordingFetch(recorder))
  const chat = useChat({
    ...(initialThreadId === undefined ? {} : { threadId: initialThreadId }),
    api: '/api/agent',
    credentials: 'same-origin',
    fetch: recordingFetch,
  })
  const runtime = chat.runtime
  useEffect(() => {
    const record = () => recorder.addSnapshot(projectSnapshot(runtime.getSnapshot()))
    record()
    return runtime.subscribe(record)
  }, [runtime, recorder])
  return chat
}
