import type { CoreState } from './reducer.ts'
import type { ChatBranches } from './types.ts'

/**
 * The branch part of the reducer (docs/react-runtime.md#branches): a branch command in flight (`branching`, its
 * number; it locks the history like a run does) and the thread tree read for the active thread.
 */
export type BranchAction =
  /** A branch command started its requests: `op` numbers it. */
  | { readonly type: 'branch/started'; readonly op: number }
  /** It ended (switched, or refused: then nothing else changed). */
  | { readonly type: 'branch/ended'; readonly op: number }
  /** The tree read for `branches.threadId`: ignored once another thread is active. */
  | { readonly type: 'branches/loaded'; readonly branches: ChatBranches }

export function reduceBranch(state: CoreState, action: BranchAction): CoreState {
  switch (action.type) {
    case 'branch/started':
      return { ...state, branching: action.op }
    case 'branch/ended':
      return state.branching === action.op ? { ...state, branching: undefined } : state
    case 'branches/loaded':
      return action.branches.threadId === state.threadId ? { ...state, branches: action.branches } : state
  }
}
