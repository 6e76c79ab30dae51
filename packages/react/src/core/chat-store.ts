import type { Action, CoreState } from './reducer.ts'
import { reduce, toSnapshot } from './reducer.ts'
import { Store } from './store.ts'
import type { ChatSnapshot } from './types.ts'

/** The runtime's store: `CoreState` changed only through the reducer, `ChatSnapshot` derived per commit. */
export class ChatStore<TState> extends Store<CoreState, ChatSnapshot<TState>> {
  constructor(state: CoreState) {
    super(state, toSnapshot<TState>)
  }

  /** Applies one action (inside a transaction it commits with the transaction). */
  dispatch(action: Action): void {
    this.set(reduce(this.state, action))
  }

  /** Dispatches one action as its own commit. */
  commit(action: Action): void {
    this.transaction(() => this.dispatch(action))
  }
}
