import { ListenerSet } from './listener-set.ts'

/**
 * The commit primitive of the client core (the shape of TanStack Query's `Subscribable` plus a
 * cached result): one state value, a snapshot derived from it once per commit, and subscribers
 * notified once per commit. Writes inside `transaction` commit together when the outermost one
 * ends; a write outside any transaction commits at once. Between commits the snapshot keeps its
 * identity; an identical state is no change.
 */
export class Store<TState, TSnapshot> {
  #state: TState
  #snapshot: TSnapshot
  readonly #derive: (state: TState) => TSnapshot
  readonly #listeners = new ListenerSet()
  #depth = 0
  #dirty = false

  constructor(state: TState, derive: (state: TState) => TSnapshot) {
    this.#state = state
    this.#derive = derive
    this.#snapshot = derive(state)
  }

  /** Adds a change listener; returns the unsubscribe function (for `useSyncExternalStore`). */
  readonly subscribe = (listener: () => void): (() => void) => this.#listeners.add(listener)

  /** The snapshot of the last commit (identity-stable between commits). */
  readonly getSnapshot = (): TSnapshot => this.#snapshot

  /** The current state, including writes of a transaction that has not committed yet. */
  get state(): TState {
    return this.#state
  }

  /** Replaces the state; an identical value is no change. */
  set(next: TState): void {
    if (next === this.#state) return
    this.#state = next
    this.#dirty = true
    if (this.#depth === 0) this.#commit()
  }

  /** Runs `fn` as one commit: subscribers hear about its writes once, after the outermost transaction. */
  transaction(fn: () => void): void {
    this.#depth += 1
    try {
      fn()
    } finally {
      this.#depth -= 1
      if (this.#depth === 0) this.#commit()
    }
  }

  /** Drops every subscriber (disposal). */
  clear(): void {
    this.#listeners.clear()
  }

  #commit(): void {
    if (!this.#dirty) return
    this.#dirty = false
    this.#snapshot = this.#derive(this.#state)
    this.#listeners.emit()
  }
}
