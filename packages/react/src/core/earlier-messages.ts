import type { InterludeError, Message, ThreadSnapshot } from '@interlude/protocol'
import { errorFromFetch } from '@interlude/protocol'
import type { ChatRuntime } from './chat-runtime.ts'
import { clientError } from './errors.ts'
import { deepFreeze, NONE } from './immutable.ts'
import { snapshotProblem } from './snapshot-problems.ts'
import { Store } from './store.ts'

/**
 * The older pages of a long thread (docs/client-contract.md#restoring-a-conversation). A server snapshot carries the newest page
 * of the history, and `recover()` installs only that page; `hasMoreMessages` and `messagesCursor` say where the page
 * before it starts. `EarlierMessages` reads those pages through the runtime's transport (same endpoints, headers and
 * credentials) and keeps them beside the runtime, oldest first: the app shows `earlier.messages` above the runtime's
 * `messages`. The runtime's own history stays the restored page, so nothing here can disturb a pending batch, a run or
 * a recovery. Kept out of the runtime so that `useChat` alone does not carry it (the bundle budget).
 */

/** Where the earlier pages start: the snapshot `recover()` resolved with (or any `ThreadSnapshot` of the thread). */
export type EarlierFrom = Pick<ThreadSnapshot, 'threadId' | 'hasMoreMessages' | 'messagesCursor'>

/** What `EarlierMessages` needs of a runtime (a `ChatRuntime` of any state). */
export interface EarlierSource {
  getSnapshot(): { readonly threadId: string; readonly messages: readonly Message[] }
  readonly getEarlierPage: ChatRuntime['getEarlierPage']
}

export interface EarlierMessagesSnapshot {
  /** Loaded messages older than the runtime's, oldest first, deep-frozen. */
  readonly messages: readonly Message[]
  /** The server holds older messages than these. */
  readonly hasMore: boolean
  /** A page is being read. */
  readonly loading: boolean
  /** The failure of the last read (cleared by the next one). */
  readonly error: InterludeError | undefined
}

interface State extends EarlierMessagesSnapshot {
  readonly threadId: string
  readonly cursor: string | undefined
}

const snapshotOf = ({ messages, hasMore, loading, error }: State): EarlierMessagesSnapshot =>
  Object.freeze({ messages, hasMore, loading, error })

export class EarlierMessages {
  readonly #runtime: EarlierSource
  readonly #store: Store<State, EarlierMessagesSnapshot>
  #flight: Promise<void> | undefined
  #controller: AbortController | undefined

  /** No request until `loadMore` (safe to construct and discard, as React's StrictMode does). */
  constructor(runtime: EarlierSource, from: EarlierFrom | undefined) {
    this.#runtime = runtime
    const cursor = from?.hasMoreMessages === true && from.messagesCursor ? from.messagesCursor : undefined
    const threadId = from?.threadId ?? runtime.getSnapshot().threadId
    this.#store = new Store<State, EarlierMessagesSnapshot>(
      { threadId, cursor, messages: NONE, hasMore: cursor !== undefined, loading: false, error: undefined },
      snapshotOf,
    )
  }

  readonly subscribe = (listener: () => void): (() => void) => this.#store.subscribe(listener)

  readonly getSnapshot = (): EarlierMessagesSnapshot => this.#store.getSnapshot()

  /**
   * Reads the page before the loaded ones and puts it in front of them. Resolves when it is in (or failed: then
   * `error` says why and the same page can be asked for again); never rejects. Calls while a page is being read share
   * that read; with nothing older, or once the runtime is on another thread, it does nothing.
   */
  readonly loadMore = (): Promise<void> => {
    const s = this.#store.state
    if (s.cursor === undefined || this.#runtime.getSnapshot().threadId !== s.threadId) return Promise.resolve()
    this.#flight ??= this.#read(s.cursor).finally(() => (this.#flight = undefined))
    return this.#flight
  }

  /** Aborts a read in flight (an unmount); `loadMore` works again afterwards. */
  readonly abort = (): void => this.#controller?.abort()

  async #read(cursor: string): Promise<void> {
    const controller = new AbortController()
    this.#controller = controller
    const s = this.#store.state
    this.#store.set({ ...s, loading: true, error: undefined })
    try {
      const page = await this.#runtime.getEarlierPage(cursor, { signal: controller.signal })
      const problem = snapshotProblem({ threadId: page?.threadId, messages: page?.messages }, s.threadId)
      if (problem !== undefined)
        throw clientError('PROTOCOL_ERROR', `Invalid page of earlier messages: ${problem}.`, {
          reason: 'invalid_snapshot',
          problem,
        })
      const now = this.#store.state
      // Only messages not shown yet, here or by the runtime (a page may overlap the restored one).
      const shown = new Set([...now.messages, ...this.#runtime.getSnapshot().messages].map((m) => m.id))
      const older = page.messages.filter((m) => !shown.has(m.id)).map((m) => deepFreeze(m))
      const next = page.hasMoreMessages === true && page.messagesCursor ? page.messagesCursor : undefined
      this.#store.set({
        ...now,
        cursor: next,
        hasMore: next !== undefined,
        messages: older.length === 0 ? now.messages : Object.freeze([...older, ...now.messages]),
        loading: false,
      })
    } catch (error) {
      this.#store.set({ ...this.#store.state, loading: false, error: errorFromFetch(error) })
    } finally {
      if (this.#controller === controller) this.#controller = undefined
    }
  }
}
