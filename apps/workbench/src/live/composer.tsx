export interface ComposerProps {
  readonly draft: string
  readonly onDraft: (text: string) => void
  /** Sends the draft: queued behind the running run (`enqueue`), or into it (`steer`). */
  readonly onSend: (whileBusy?: 'steer') => void
  readonly onStop: () => void
  /** A batch waits for answers: the composer waits too. */
  readonly waitingForBatch: boolean
  /** Nothing can be sent (recovery required, restoring). */
  readonly blocked: boolean
  /** A run is in progress: Stop works, and Send queues the draft. */
  readonly running: boolean
  /** The run streams: its turn can take the draft (Steer). */
  readonly streaming: boolean
}

/**
 * The message box. It stays usable while a run streams (the workbench opts in with `whileBusy: 'enqueue'`,
 * docs/react-runtime.md#many-messages-one-thread): Send queues the draft, Steer hands it to the running turn.
 */
export function Composer({
  draft,
  onDraft,
  onSend,
  onStop,
  waitingForBatch,
  blocked,
  running,
  streaming,
}: ComposerProps) {
  const empty = draft.trim() === ''
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault()
        onSend()
      }}
    >
      <label className="visually-hidden" htmlFor="composer">
        Message
      </label>
      <textarea
        id="composer"
        rows={2}
        value={draft}
        placeholder={
          waitingForBatch
            ? 'Answer the pending batch first'
            : running
              ? 'Queue another message, or steer the running turn'
              : 'Message the release assistant, e.g. “deploy v2.1 to production”'
        }
        disabled={blocked || waitingForBatch}
        onChange={(e) => onDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            onSend()
          }
        }}
      />
      <button type="submit" className="primary" disabled={blocked || waitingForBatch || empty}>
        Send
      </button>
      {streaming && (
        <button type="button" disabled={blocked || empty} onClick={() => onSend('steer')}>
          Steer
        </button>
      )}
      <button type="button" disabled={!running} onClick={onStop}>
        Stop
      </button>
    </form>
  )
}
