import { useChat } from '@interlude/react'
import type { UseChatResult } from '@interlude/react'
import type { DecisionRecord } from '@interlude/protocol'
import { useCallback, useEffect, useMemo, useState } from 'react'
import { decisionFromEvent, mergeDecisions } from '../approvals/decision-summary.ts'
import { authHeaders } from '../auth/session-token.ts'
import { WORKBENCH_TOOLS } from './browser-tools.ts'
import { projectSnapshot } from '../recording/project-snapshot.ts'
import type { Recorder } from '../recording/recorder.ts'
import { createRecordingFetch } from '../recording/recording-fetch.ts'

export interface RecordedChat {
  readonly chat: UseChatResult
  /** The thread's decision records seen by this page (`interlude.decision` events and restored snapshots). */
  readonly decisions: readonly DecisionRecord[]
  /** Adds records from a restored `ThreadSnapshot.decisions`. */
  readonly addDecisions: (records: readonly DecisionRecord[] | undefined) => void
}

/**
 * `useChat` for the live workbench: every request goes through the recording fetch (requests,
 * outcomes and SSE events with their receive time), and every snapshot change is recorded through
 * a direct subscription to the runtime (so React's batching cannot coalesce changes away). With a
 * session token every request carries it (`Authorization: Bearer …`, read before each request).
 */
export function useRecordedChat(recorder: Recorder, initialThreadId: string | undefined): RecordedChat {
  const [recordingFetch] = useState(() => createRecordingFetch(recorder))
  const [records, setRecords] = useState<{ threadId: string; list: readonly DecisionRecord[] }>({
    threadId: '',
    list: [],
  })
  const chat = useChat({
    ...(initialThreadId === undefined ? {} : { threadId: initialThreadId }),
    api: '/api/agent',
    credentials: 'same-origin',
    headers: authHeaders,
    fetch: recordingFetch,
    tools: WORKBENCH_TOOLS,
    // The composer stays usable while a run streams: a message sent then is queued (docs/react-runtime.md).
    whileBusy: 'enqueue',
    onEvent: (event) => {
      const record = decisionFromEvent(event)
      if (record !== undefined) addRecords([record])
    },
  })
  const runtime = chat.runtime
  const addRecords = useCallback((list: readonly DecisionRecord[] | undefined) => {
    if (list === undefined || list.length === 0) return
    setRecords((current) => {
      const threadId = list[0]!.threadId
      const base = current.threadId === threadId ? current.list : []
      return { threadId, list: mergeDecisions(base, list) }
    })
  }, [])
  useEffect(() => {
    const record = () => recorder.addSnapshot(projectSnapshot(runtime.getSnapshot()))
    record()
    return runtime.subscribe(record)
  }, [runtime, recorder])
  // `useChat().decisions` (the snapshot's records and every `interlude.decision` event, a follow-joined run's too);
  // the page's own collection covers a runtime without it.
  const own = records.threadId === chat.threadId ? records.list : NONE
  const held = (chat as { decisions?: readonly DecisionRecord[] }).decisions
  const decisions = useMemo(
    () => (held === undefined || held.length === 0 ? own : mergeDecisions(held, own)),
    [held, own],
  )
  return { chat, decisions, addDecisions: addRecords }
}

const NONE: readonly DecisionRecord[] = []
