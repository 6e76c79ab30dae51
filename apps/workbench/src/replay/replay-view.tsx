import { useEffect, useMemo, useRef } from 'react'
import type { ReactNode } from 'react'
import type { Recording } from '../recording/recording-types.ts'
import { DecisionTrail } from '../ui/decision-trail.tsx'
import { MessageList } from '../ui/message-list.tsx'
import { BatchReadonly } from './batch-readonly.tsx'
import { InspectorPanel, formatT } from './inspector-panel.tsx'
import { SPEEDS } from './player-state.ts'
import { buildReplayIndex } from './replay-index.ts'
import type { InspectorView } from './replay-index.ts'
import { useReplayPlayer } from './use-replay-player.ts'

export interface ReplayViewProps {
  readonly recording: Recording
  readonly sourceLabel: string
  readonly onReturnToLive: () => void
  /** What the banner says about the source after its title (default: read-only, no requests, no writes). */
  readonly notice?: ReactNode
  /**
   * Actions on the selected frame (a stored thread's "fork here" and "what if…"), shown outside the read-only
   * conversation; absent for recordings, whose replay makes no request.
   */
  readonly frameActions?: (view: InspectorView) => ReactNode
}

/**
 * Replay renders from the recording only. It mounts no `useChat`, holds no fetch and writes
 * nothing (no storage, no requests): every control of the live session is shown disabled.
 */
export function ReplayView({ recording, sourceLabel, onReturnToLive, notice, frameActions }: ReplayViewProps) {
  const index = useMemo(() => buildReplayIndex(recording), [recording])
  const [player, dispatch] = useReplayPlayer(recording.frames)
  const view = index.inspect(player.index)
  const snapshot = view?.snapshot
  const timelineRef = useRef<HTMLOListElement>(null)
  const rootRef = useRef<HTMLDivElement>(null)

  // Opening a recording (from the menu or a file) moves focus into the replay, so the arrow keys
  // step at once instead of going to <body>.
  useEffect(() => {
    rootRef.current?.focus({ preventScroll: true })
  }, [recording])

  useEffect(() => {
    const item = timelineRef.current?.querySelector<HTMLElement>(`[data-index="${player.index}"]`)
    item?.scrollIntoView({ block: 'nearest' })
  }, [player.index])

  const awaiting = useMemo(() => {
    const ids = new Set<string>()
    for (const interrupt of snapshot?.pendingInterrupts?.interrupts ?? []) {
      if (typeof interrupt === 'object' && interrupt !== null && !Array.isArray(interrupt)) {
        const toolCallId = (interrupt as { toolCallId?: unknown }).toolCallId
        if (typeof toolCallId === 'string') ids.add(toolCallId)
      }
    }
    return ids
  }, [snapshot])

  const last = Math.max(0, recording.frames.length - 1)
  return (
    <main
      ref={rootRef}
      tabIndex={-1}
      className="replay"
      data-testid="replay-view"
      aria-label="Replay"
      onKeyDown={(e) => {
        // ← / → step, Home / End jump; form controls keep their own keys.
        if (
          e.target instanceof HTMLSelectElement ||
          e.target instanceof HTMLInputElement ||
          e.target instanceof HTMLTextAreaElement
        )
          return
        const action =
          e.key === 'ArrowRight'
            ? ({ type: 'step', by: 1 } as const)
            : e.key === 'ArrowLeft'
              ? ({ type: 'step', by: -1 } as const)
              : e.key === 'Home'
                ? ({ type: 'seek', index: 0 } as const)
                : e.key === 'End'
                  ? ({ type: 'seek', index: last } as const)
                  : undefined
        if (action === undefined) return
        e.preventDefault()
        dispatch(action)
      }}
    >
      {/* The page's h1 is the app's; the inspector's and the batch's h3s sit under this one. */}
      <h2 className="visually-hidden">Replay of {recording.meta.title}</h2>
      <div className="replay-banner" role="status">
        <strong>Replay</strong> of “{recording.meta.title}” ({sourceLabel}) ·{' '}
        {notice === undefined ? 'recorded' : 'read'} {new Date(recording.createdAt).toLocaleString()} ·{' '}
        {notice ?? 'read-only: no requests, no writes.'}
        <button type="button" className="primary" onClick={onReturnToLive}>
          Return to Live
        </button>
      </div>

      <div className="replay-controls" role="toolbar" aria-label="Replay controls">
        <button
          type="button"
          onClick={() => dispatch({ type: 'seek', index: 0 })}
          disabled={player.index === 0}
          aria-label="First frame"
        >
          « First
        </button>
        <button
          type="button"
          onClick={() => dispatch({ type: 'step', by: -1 })}
          disabled={player.index === 0}
          aria-label="Step back"
        >
          ◀ Step
        </button>
        {player.playing ? (
          <button type="button" className="primary" onClick={() => dispatch({ type: 'pause' })}>
            Pause
          </button>
        ) : (
          <button
            type="button"
            className="primary"
            onClick={() => dispatch({ type: 'play' })}
            disabled={recording.frames.length === 0}
          >
            Play
          </button>
        )}
        <button
          type="button"
          onClick={() => dispatch({ type: 'step', by: 1 })}
          disabled={player.index >= last}
          aria-label="Step forward"
        >
          Step ▶
        </button>
        <button
          type="button"
          onClick={() => dispatch({ type: 'seek', index: last })}
          disabled={player.index >= last}
          aria-label="Last frame"
        >
          Last »
        </button>
        <label>
          Speed{' '}
          <select value={player.speed} onChange={(e) => dispatch({ type: 'set-speed', speed: Number(e.target.value) })}>
            {SPEEDS.map((speed) => (
              <option key={speed} value={speed}>
                {speed}×
              </option>
            ))}
          </select>
        </label>
        <label>
          Pacing{' '}
          <select
            value={player.pacing}
            onChange={(e) =>
              dispatch({ type: 'set-pacing', pacing: e.target.value === 'fixed' ? 'fixed' : 'recorded' })
            }
          >
            <option value="recorded">Recorded gaps (≤ {player.maxGapMs / 1000} s)</option>
            <option value="fixed">Fixed ({player.fixedMs} ms per frame)</option>
          </select>
        </label>
        <span className="frame-counter" aria-live="polite">
          Frame {recording.frames.length === 0 ? 0 : player.index + 1} / {recording.frames.length}
          {view ? ` · t = ${formatT(view.frame.t)}` : ''}
        </span>
        {index.pausedFrames.length > 0 && (
          <span className="paused-links">
            Paused frames:{' '}
            {index.pausedFrames.map((at, n) => (
              <button key={at} type="button" className="link" onClick={() => dispatch({ type: 'seek', index: at })}>
                batch {n + 1}
              </button>
            ))}
          </span>
        )}
      </div>

      {frameActions && view && (
        <section className="frame-actions" aria-label="Time travel at this frame">
          {frameActions(view)}
        </section>
      )}

      <div className="replay-body">
        <nav className="timeline" aria-label="Timeline">
          <ol ref={timelineRef}>
            {index.timeline.map((entry) => (
              <li key={entry.index}>
                <button
                  type="button"
                  data-index={entry.index}
                  className={`frame frame-${entry.kind}${entry.paused ? ' frame-paused' : ''}`}
                  aria-current={entry.index === player.index ? 'step' : undefined}
                  onClick={() => dispatch({ type: 'seek', index: entry.index })}
                >
                  <span className="frame-t">{formatT(entry.t)}</span> <span className="frame-label">{entry.label}</span>
                </button>
              </li>
            ))}
          </ol>
        </nav>

        {/* Focusable: its controls are all disabled, and a scrolling region must be reachable by keyboard. */}
        <section className="replay-chat" aria-label="Conversation at this frame" tabIndex={0}>
          <div className="chat-status">
            {snapshot ? (
              <>
                thread <code>{snapshot.threadId.slice(0, 8)}</code> ·{' '}
                {snapshot.isResuming ? 'resuming…' : snapshot.isLoading ? `${snapshot.status}…` : 'idle'}
                {snapshot.recovery.required && <span className="alert-inline"> · recovery required</span>}
              </>
            ) : (
              'no snapshot yet'
            )}
          </div>
          {snapshot?.error && (
            <p className="error" role="alert">
              {snapshot.error.code}: {snapshot.error.message}
            </p>
          )}
          <MessageList
            messages={snapshot?.messages ?? []}
            awaitingToolCallIds={awaiting}
            busy={snapshot?.isLoading ?? false}
          />
          <DecisionTrail decisions={view?.decisions ?? []} label="Decisions at this frame" />
          {view?.batch && view.batchState !== 'none' && (
            <BatchReadonly
              batch={view.batch}
              form={view.form}
              state={view.batchState === 'pending' ? 'pending' : 'answered'}
              resuming={snapshot?.isResuming ?? false}
            />
          )}
          <form
            className="composer"
            onSubmit={(e) => e.preventDefault()}
            aria-label="Message composer (disabled in replay)"
          >
            <label className="visually-hidden" htmlFor="replay-composer">
              Message
            </label>
            <textarea id="replay-composer" disabled placeholder="Live controls are disabled during replay" rows={2} />
            <button type="submit" disabled>
              Send
            </button>
            <button type="button" disabled>
              Stop
            </button>
          </form>
        </section>

        <aside className="replay-inspector">
          {view ? <InspectorPanel view={view} /> : <p className="muted">This recording has no frames.</p>}
        </aside>
      </div>
    </main>
  )
}
