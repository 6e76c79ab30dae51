import type { Interrupt } from '@interlude/protocol'
import type * as Foreign from './foreign.ts'
import { lazyModule } from './lazy-module.ts'

/**
 * Foreign-server support (docs/decisions.md#foreign-servers) is loaded on first need, not bundled into every app:
 * most apps talk to Interlude and never see a LangGraph or Mastra pause. The loaded module presents foreign
 * interrupts, reads their legacy `CUSTOM on_interrupt` pauses and shapes answers for their servers.
 */
type ForeignModule = typeof Foreign

export const loadForeign: () => Promise<ForeignModule> = lazyModule(() => import('./foreign.ts'))

/** The legacy pause event's name: only such events need the foreign module. */
export const LEGACY_INTERRUPT_EVENT = 'on_interrupt'

/** Whether an interrupt came from a foreign bridge (its metadata names one); only those need the foreign module. */
export function mayBeForeign(interrupt: Interrupt): boolean {
  const metadata = interrupt.metadata
  return typeof metadata === 'object' && metadata !== null && ('langgraph' in metadata || 'mastra' in metadata)
}
