import type { DecisionRecord, GuardrailEvent } from '@interlude/protocol'
import { decisionFromEvent, isDecisionRecord, mergeDecisions } from '../approvals/decision-summary.ts'
import { guardrailFromEvent } from './guardrail-trail.ts'
import type {
  FormFrame,
  Json,
  RecordedBatch,
  Recording,
  RecordingFrame,
  RequestEndFrame,
  RequestResponseFrame,
  RequestStartFrame,
  SnapshotProjection,
} from '../recording/recording-types.ts'

/**
 * Everything the replay view derives from a recording, computed once per recording: for every
 * frame, the SDK snapshot at that moment, the batch, the form choices captured for that batch
 * so far and the request in context. The inspector reads one `InspectorView` per selected frame.
 */

export interface RequestView {
  readonly requestId: string
  readonly start: RequestStartFrame | undefined
  /** Present once the response head had arrived at the selected frame. */
  readonly response: RequestResponseFrame | undefined
  /** Present once the request had ended at the selected frame. */
  readonly end: RequestEndFrame | undefined
  /** SSE events of this request received up to the selected frame. */
  readonly eventsSoFar: number
}

export interface InspectorView {
  readonly index: number
  /** The raw observation. */
  readonly frame: RecordingFrame
  /** The latest `useChat` snapshot at or before the frame. */
  readonly snapshot: SnapshotProjection | undefined
  /**
   * The SDK batch in context: the pending batch of that snapshot, or (`answered`) the last batch
   * seen before it, e.g. while its resume is in flight.
   */
  readonly batch: RecordedBatch | undefined
  readonly batchState: 'pending' | 'answered' | 'none'
  /** The latest form choices for that batch captured at or before the frame. */
  readonly form: FormFrame | undefined
  readonly request: RequestView | undefined
  /**
   * Who decided which batch, as far as the client knew at the frame: the snapshot's `decisions` (where recorded)
   * and every `interlude.decision` event received so far (a follow-joined run's too).
   */
  readonly decisions: readonly DecisionRecord[]
  /** The `interlude.guardrail` events received so far: every check, and every decision on a failed one. */
  readonly guardrails: readonly GuardrailEvent[]
}

export interface TimelineEntry {
  readonly index: number
  readonly t: number
  readonly kind: RecordingFrame['kind']
  readonly label: string
  /** A snapshot frame where a batch is waiting for answers. */
  readonly paused: boolean
}

export interface ReplayIndex {
  readonly recording: Recording
  readonly timeline: readonly TimelineEntry[]
  /** Frames where a new batch was first shown (good places to inspect). */
  readonly pausedFrames: readonly number[]
  inspect(index: number): InspectorView | undefined
}

export function buildReplayIndex(recording: Recording): ReplayIndex {
  const frames = recording.frames
  const snapshotAt: number[] = []
  const batchAt: (RecordedBatch | undefined)[] = []
  const requestAt: (string | undefined)[] = []
  const formsByBatch = new Map<string, number[]>()
  const requests = new Map<string, { start?: number; response?: number; end?: number; events: number[] }>()
  const pausedFrames: number[] = []
  const decisionsAt: (readonly DecisionRecord[])[] = []
  let decisions: readonly DecisionRecord[] = []
  const guardrailsAt: (readonly GuardrailEvent[])[] = []
  let guardrails: readonly GuardrailEvent[] = []
  const timeline: TimelineEntry[] = []

  let lastSnapshot = -1
  let lastBatch: RecordedBatch | undefined
  let lastRequest: string | undefined
  frames.forEach((frame, index) => {
    let paused = false
    switch (frame.kind) {
      case 'snapshot': {
        lastSnapshot = index
        const held = (frame.snapshot.decisions ?? []).filter((d): d is Json & DecisionRecord => isDecisionRecord(d))
        if (held.length > 0) decisions = mergeDecisions(decisions, held)
        const batch = frame.snapshot.pendingInterrupts
        if (batch) {
          if (batch.id !== lastBatch?.id) pausedFrames.push(index)
          lastBatch = batch
          paused = !frame.snapshot.isResuming
        }
        break
      }
      case 'form':
        formsByBatch.set(frame.batchId, [...(formsByBatch.get(frame.batchId) ?? []), index])
        break
      case 'request-start':
      case 'request-response':
      case 'request-end':
      case 'sse-event': {
        const entry = requests.get(frame.requestId) ?? { events: [] }
        if (frame.kind === 'request-start') {
          entry.start = index
          lastRequest = frame.requestId
        } else if (frame.kind === 'request-response') entry.response = index
        else if (frame.kind === 'request-end') entry.end = index
        else {
          entry.events.push(index)
          const record = decisionFromEvent(frame.event)
          if (record !== undefined && !decisions.some((d) => d.runId === record.runId))
            decisions = mergeDecisions(decisions, [record])
          const check = guardrailFromEvent(frame.event)
          if (check !== undefined) guardrails = [...guardrails, check]
        }
        requests.set(frame.requestId, entry)
        break
      }
      case 'action':
        break
    }
    decisionsAt.push(decisions)
    guardrailsAt.push(guardrails)
    snapshotAt.push(lastSnapshot)
    batchAt.push(lastBatch)
    requestAt.push(
      frame.kind === 'action' || frame.kind === 'snapshot' || frame.kind === 'form' ? lastRequest : frame.requestId,
    )
    timeline.push({ index, t: frame.t, kind: frame.kind, label: labelOf(frame), paused })
  })

  function inspect(index: number): InspectorView | undefined {
    const frame = frames[index]
    if (frame === undefined) return undefined
    const snapshotIndex = snapshotAt[index] ?? -1
    const snapshotFrame = snapshotIndex >= 0 ? frames[snapshotIndex] : undefined
    const snapshot = snapshotFrame?.kind === 'snapshot' ? snapshotFrame.snapshot : undefined
    const pending = snapshot?.pendingInterrupts ?? undefined
    const batch = pending ?? batchAt[index]
    const formIndex = batch ? lastAtOrBefore(formsByBatch.get(batch.id) ?? [], index) : undefined
    const formFrame = formIndex === undefined ? undefined : frames[formIndex]
    const requestId = requestAt[index]
    const entry = requestId === undefined ? undefined : requests.get(requestId)
    const pick = <F extends RecordingFrame>(at: number | undefined): F | undefined =>
      at !== undefined && at <= index ? (frames[at] as F) : undefined
    return {
      index,
      frame,
      snapshot,
      batch,
      batchState: pending ? 'pending' : batch ? 'answered' : 'none',
      decisions: decisionsAt[index] ?? [],
      guardrails: guardrailsAt[index] ?? [],
      form: formFrame?.kind === 'form' ? formFrame : undefined,
      request:
        requestId === undefined || entry === undefined
          ? undefined
          : {
              requestId,
              start: pick<RequestStartFrame>(entry.start),
              response: pick<RequestResponseFrame>(entry.response),
              end: pick<RequestEndFrame>(entry.end),
              eventsSoFar: entry.events.filter((at) => at <= index).length,
            },
    }
  }

  return { recording, timeline, pausedFrames, inspect }
}

function lastAtOrBefore(sorted: readonly number[], index: number): number | undefined {
  let found: number | undefined
  for (const at of sorted) {
    if (at > index) break
    found = at
  }
  return found
}

function eventType(event: Json): string {
  if (typeof event === 'object' && event !== null && !Array.isArray(event)) {
    const type = (event as { readonly [key: string]: Json }).type
    if (typeof type === 'string') return type
  }
  return 'malformed'
}

/** A one-line description of a frame for the timeline. */
export function labelOf(frame: RecordingFrame): string {
  switch (frame.kind) {
    case 'sse-event':
      return `${eventType(frame.event)}${frame.sseId === null ? '' : ` #${frame.sseId}`}`
    case 'snapshot': {
      const s = frame.snapshot
      if (s.recovery.required) return 'snapshot · recovery required'
      if (s.error) return `snapshot · error ${s.error.code}`
      if (s.pendingInterrupts)
        return `snapshot · ${s.isResuming ? 'resuming' : 'awaiting'} ${s.pendingInterrupts.interrupts.length} answer${s.pendingInterrupts.interrupts.length === 1 ? '' : 's'}`
      if (s.isResuming) return 'snapshot · resuming'
      return `snapshot · ${s.isLoading ? s.status : 'idle'} · ${s.messages.length} message${s.messages.length === 1 ? '' : 's'}`
    }
    case 'form':
      return frame.phase === 'submit' ? 'form · submit' : 'form · draft'
    case 'request-start':
      return `${frame.method} ${frame.path.replace(/^\/api\/agent/, '')} (${frame.purpose})`
    case 'request-response':
      return frame.error ? `→ ${frame.status} ${frame.error.code}` : `→ ${frame.status}`
    case 'request-end':
      return `end · ${frame.outcome}${frame.error ? ` ${frame.error.code}` : ''}`
    case 'action':
      return `action · ${frame.name}${frame.error ? ` (refused: ${frame.error.code})` : ''}`
  }
}
