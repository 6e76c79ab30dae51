import type * as Branching from './branching.ts'
import { lazyModule } from './lazy-module.ts'

/**
 * The requests of the branch commands (docs/react-runtime.md#branches) are loaded on first need, the way foreign-server
 * support is (foreign-support.ts): most pages never edit a sent message or switch branches.
 */
export type BranchingModule = typeof Branching

export const loadBranching: () => Promise<BranchingModule> = lazyModule(() => import('./branching.ts'))
