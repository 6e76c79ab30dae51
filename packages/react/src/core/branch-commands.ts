import type { ThreadSnapshot } from '@interlude/protocol'
import { clientError } from './errors.ts'
import type { BranchingModule } from './branch-support.ts'
import { loadBranching } from './branch-support.ts'
import { checkMessagesUnlocked, checkNoActiveRun, checkNotBranching } from './guards.ts'
import type { ResolvedOptions } from './options.ts'
import type { ServerFeatures } from './server-features.ts'
import { noServerSnapshots } from './server-features.ts'
import type { InstallHost } from './thread-install.ts'
import { installThread } from './thread-install.ts'
import type { Transport } from './transport.ts'
import type { ChatBranches, RecoverResult } from './types.ts'

/** What the branch commands get from their runtime. */
export interface BranchHost extends InstallHost {
  readonly options: () => ResolvedOptions<unknown>
  readonly transport: () => Transport
  readonly features: ServerFeatures
  /** Throws `INVALID_STATE` once the runtime is disposed. */
  readonly assertAlive: () => void
}

/** What `branching.ts` uses: it imports nothing else at run time (no chunk shared with the eager bundle). */
export interface BranchEnv extends BranchHost {
  /** `installThread` of the current thread's fetched snapshot, captured at `revision`. */
  readonly install: (snapshot: ThreadSnapshot, revision: number) => RecoverResult
  readonly fail: typeof clientError
}

/**
 * `editMessage`, `regenerate`, `switchBranch` and `loadBranches` (docs/react-runtime.md#branches). The locks are
 * checked here, synchronously, like `sendMessage`'s; everything else — the arguments, the fork point, the requests —
 * is in `branching.ts`, loaded on first use. A command in flight is numbered (`branch/started`) and locks the history
 * until it switched threads (the thread change ends it) or failed (`branch/ended`: nothing else changed).
 */
export class BranchCommands {
  readonly #env: BranchEnv
  #op = 0

  constructor(host: BranchHost) {
    const install = (snapshot: ThreadSnapshot, revision: number) => installThread(host, snapshot, revision)
    this.#env = { ...host, install, fail: clientError }
  }

  edit(messageId: string, text: string): Promise<void> {
    return this.#start('edit a message', (m, op) => m.editMessage(this.#env, op, messageId, text))
  }

  regenerate(messageId: string | undefined): Promise<void> {
    return this.#start('regenerate an answer', (m, op) => m.regenerate(this.#env, op, messageId))
  }

  /** Unlike the others, allowed while a batch is pending: it stays the thread's, and comes back with it. */
  switchTo(threadId: string): Promise<void> {
    return this.#start('', (m, op) => m.switchBranch(this.#env, op, threadId))
  }

  /** Reads the tree around the active thread; it lands in `branches` unless the thread changed meanwhile. */
  async load(): Promise<ChatBranches> {
    this.#check()
    return (await loadBranching()).loadBranches(this.#env, this.#env.store.state.threadId)
  }

  #check(): void {
    const env = this.#env
    env.assertAlive()
    if (!env.transport().fork || !env.features.available) throw noServerSnapshots()
  }

  /** `what`: the history lock of that command (empty: only a run or another branch command in flight refuse). */
  #start(what: string, work: (m: BranchingModule, op: number) => Promise<void>): Promise<void> {
    this.#check()
    const { store } = this.#env
    if (what) checkMessagesUnlocked(store.state, what)
    else {
      checkNoActiveRun(store.state, 'switch branches')
      checkNotBranching(store.state, 'switch branches')
    }
    const op = ++this.#op
    store.commit({ type: 'branch/started', op })
    return loadBranching()
      .then((m) => work(m, op))
      .catch((error: unknown) => {
        store.commit({ type: 'branch/ended', op })
        throw error
      })
  }
}
