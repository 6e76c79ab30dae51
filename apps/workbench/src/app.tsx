import { useCallback, useState, useSyncExternalStore } from 'react'
import { ApprovalsView, workbenchDecisionsClient } from './approvals/approvals-view.tsx'
import { adoptTokenFromUrl, authHeaders } from './auth/session-token.ts'
import { SignIn } from './auth/sign-in.tsx'
import { createHistoryClient } from './history/history-client.ts'
import { ServerReplay } from './history/server-replay.tsx'
import { LiveView } from './live/live-view.tsx'
import { writeThreadToUrl } from './live/thread-url.ts'
import { PermissionsView } from './permissions/permissions-view.tsx'
import { createRecordingFetch } from './recording/recording-fetch.ts'
import { Recorder } from './recording/recorder.ts'
import { downloadRecording, readRecordingFile } from './recording/recording-file.ts'
import type { Recording } from './recording/recording-types.ts'
import { SHIPPED_RECORDINGS } from './recordings/index.ts'
import { ReplayView } from './replay/replay-view.tsx'
import { ErrorBoundary } from './ui/error-boundary.tsx'

type Mode =
  | { readonly kind: 'live' }
  | { readonly kind: 'replay'; readonly recording: Recording; readonly label: string; readonly key: number }
  /** A stored thread replayed from the server's log (time travel: forks, branches). */
  | { readonly kind: 'history'; readonly key: number }

export const APP_NAME = '@interlude/workbench'

/**
 * The live session's views: the owner's chat, the deciders' Approvals view (`?view=approvals`) and the principal's
 * remembered permissions (`?view=permissions`).
 */
type LiveTab = 'chat' | 'approvals' | 'permissions'

function initialTab(): LiveTab {
  const view = new URLSearchParams(window.location.search).get('view')
  return view === 'approvals' || view === 'permissions' ? view : 'chat'
}

function writeTabToUrl(tab: LiveTab): void {
  const url = new URL(window.location.href)
  if (tab !== 'chat') url.searchParams.set('view', tab)
  else url.searchParams.delete('view')
  window.history.replaceState(null, '', url)
}

function initialMode(): Mode {
  // `?replay=<id>` opens a shipped recording directly; the live session is then not even mounted
  // until "Return to Live".
  const id = new URLSearchParams(window.location.search).get('replay')
  const shipped = SHIPPED_RECORDINGS.find((item) => item.id === id)
  return shipped ? { kind: 'replay', recording: shipped.recording, label: 'shipped', key: 0 } : { kind: 'live' }
}

export function App() {
  const [recorder] = useState(() => new Recorder())
  const [mode, setMode] = useState<Mode>(initialMode)
  const [liveMounted, setLiveMounted] = useState(() => {
    // `?token=` is moved into this tab's session storage before the live session makes its first request; a
    // replay opened by `?replay=` neither reads nor writes storage.
    if (mode.kind === 'live') adoptTokenFromUrl()
    return mode.kind === 'live'
  })
  const [tab, setTab] = useState<LiveTab>(initialTab)
  // A new token is a new principal: the live session starts again (the thread in the address is kept).
  const [session, setSession] = useState(0)
  const [loadProblems, setLoadProblems] = useState<readonly string[]>([])
  const status = useSyncExternalStore(recorder.subscribe, recorder.getStatus, recorder.getStatus)
  const replaying = mode.kind !== 'live'
  const [history] = useState(() => createHistoryClient({ headers: authHeaders }))

  const openReplay = useCallback((recording: Recording, label: string) => {
    setLoadProblems([])
    setMode({ kind: 'replay', recording, label, key: Date.now() })
  }, [])

  const returnToLive = useCallback(() => {
    if (!liveMounted) adoptTokenFromUrl()
    setLiveMounted(true)
    setMode({ kind: 'live' })
  }, [liveMounted])

  // A fork opens in the live chat: the thread goes into the address and the live session starts again on it.
  const openLive = useCallback((threadId: string) => {
    adoptTokenFromUrl()
    writeThreadToUrl(threadId)
    setTab('chat')
    writeTabToUrl('chat')
    setSession((n) => n + 1)
    setLiveMounted(true)
    setMode({ kind: 'live' })
  }, [])

  const chooseTab = (next: LiveTab) => {
    setTab(next)
    writeTabToUrl(next)
  }

  const currentRecording = useCallback(
    () =>
      recorder.toRecording({
        title: `Live session ${new Date().toLocaleString()}`,
        app: APP_NAME,
        origin: window.location.origin,
        userAgent: navigator.userAgent,
      }),
    [recorder],
  )

  const onFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0]
    input.value = ''
    if (file === undefined) return
    const check = await readRecordingFile(file)
    if (check.ok) openReplay(check.recording, `file ${file.name}`)
    else setLoadProblems(check.problems)
  }

  return (
    <div className={`app ${replaying ? 'mode-replay' : 'mode-live'}`}>
      <header className="app-header">
        <h1>
          Interlude <span className="muted">workbench</span>
        </h1>
        <span className={`mode-pill ${replaying ? 'pill-replay' : 'pill-live'}`} data-testid="mode">
          {replaying ? 'Replay' : 'Live'}
        </span>
        {!replaying && liveMounted && (
          <nav className="tabs" aria-label="Views">
            <button type="button" aria-pressed={tab === 'chat'} onClick={() => chooseTab('chat')}>
              Chat
            </button>
            <button type="button" aria-pressed={tab === 'approvals'} onClick={() => chooseTab('approvals')}>
              Approvals
            </button>
            <button type="button" aria-pressed={tab === 'permissions'} onClick={() => chooseTab('permissions')}>
              Permissions
            </button>
          </nav>
        )}
        <div className="header-actions">
          {!replaying && liveMounted && <SignIn onChange={() => setSession((n) => n + 1)} />}
          <span
            className="recorder-status"
            data-testid="recorder-status"
            title="Every SSE event, snapshot change, form choice and request outcome of the live session"
          >
            ● Recording · {status.frameCount} frame{status.frameCount === 1 ? '' : 's'}
            {status.truncated ? ' (limit reached)' : ''}
          </span>
          <button
            type="button"
            disabled={replaying || status.frameCount === 0}
            onClick={() => downloadRecording(currentRecording())}
          >
            Download recording
          </button>
          <details className="menu">
            <summary>Replay ▾</summary>
            <ul className="menu-list" aria-label="Recordings">
              <li>
                <button
                  type="button"
                  disabled={status.frameCount === 0}
                  onClick={(e) => {
                    closeMenu(e.currentTarget)
                    openReplay(currentRecording(), 'this session')
                  }}
                >
                  This session ({status.frameCount} frames)
                </button>
              </li>
              {SHIPPED_RECORDINGS.map((item) => (
                <li key={item.id}>
                  <button
                    type="button"
                    data-recording-id={item.id}
                    onClick={(e) => {
                      closeMenu(e.currentTarget)
                      openReplay(item.recording, 'shipped')
                    }}
                  >
                    {item.title}
                  </button>
                </li>
              ))}
              <li>
                <button
                  type="button"
                  onClick={(e) => {
                    closeMenu(e.currentTarget)
                    setLoadProblems([])
                    adoptTokenFromUrl()
                    setMode({ kind: 'history', key: Date.now() })
                  }}
                >
                  Stored threads (server)…
                </button>
              </li>
              <li>
                <label className="file-button">
                  Load from file…
                  <input
                    type="file"
                    accept="application/json,.json"
                    onChange={(e) => {
                      closeMenu(e.currentTarget)
                      void onFile(e.currentTarget)
                    }}
                  />
                </label>
              </li>
            </ul>
          </details>
        </div>
      </header>

      {loadProblems.length > 0 && (
        <div className="error banner" role="alert">
          This file is not a workbench recording:
          <ul>
            {loadProblems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
          <button type="button" onClick={() => setLoadProblems([])}>
            Dismiss
          </button>
        </div>
      )}

      {/* The live session stays mounted (hidden and inert) during replay so that "Return to Live"
          continues with the current live batch and its form drafts. */}
      {liveMounted && (
        <div className="live-container" hidden={replaying} inert={replaying} key={session}>
          <div hidden={tab !== 'chat'}>
            <ErrorBoundary label="live session">
              <LiveView recorder={recorder} active={!replaying && tab === 'chat'} />
            </ErrorBoundary>
          </div>
          <div hidden={tab !== 'approvals'}>
            <ErrorBoundary label="approvals">
              <ApprovalsView recorder={recorder} active={!replaying && tab === 'approvals'} />
            </ErrorBoundary>
          </div>
          <div hidden={tab !== 'permissions'}>
            <ErrorBoundary label="permissions">
              <LivePermissions recorder={recorder} active={!replaying && tab === 'permissions'} />
            </ErrorBoundary>
          </div>
        </div>
      )}
      {mode.kind === 'replay' && (
        <ErrorBoundary label="replay">
          <ReplayView
            key={mode.key}
            recording={mode.recording}
            sourceLabel={mode.label}
            onReturnToLive={returnToLive}
          />
        </ErrorBoundary>
      )}
      {mode.kind === 'history' && (
        <ErrorBoundary label="stored threads">
          <ServerReplay key={mode.key} client={history} onReturnToLive={returnToLive} onOpenLive={openLive} />
        </ErrorBoundary>
      )}
    </div>
  )
}

/** The permissions view of the live session: reads are not recorded, revokes are (like the other views' actions). */
function LivePermissions({ recorder, active }: { readonly recorder: Recorder; readonly active: boolean }) {
  const [reader] = useState(() => workbenchDecisionsClient())
  const [actor] = useState(() => workbenchDecisionsClient(createRecordingFetch(recorder)))
  return <PermissionsView client={reader} actor={actor} recorder={recorder} active={active} />
}

function closeMenu(element: HTMLElement): void {
  element.closest('details')?.removeAttribute('open')
}
