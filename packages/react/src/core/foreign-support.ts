import type { Interrupt } from '@interlude/protocol'
import type * as Foreign from './foreign.ts'

/**
 * Foreign-server support (docs/decisions.md#foreign-servers) is loaded on first need, not bundled into every app:
 * most apps talk to Interlude and never see a LangGraph or Mastra pause. The loaded module presents foreign
 * interrupts, reads their legacy `CUSTOM on_interrupt` pauses and shapes answers for their servers.
 */
type ForeignModule = typeof Foreign

let loaded: Promise<ForeignModule> | undefined

export function loadForeign(): Promise<ForeignModule> {
  // A failed load (a chunk the network lost) is tried again next time.
  loaded ??= import('./foreign.ts').catch((error: unknown) => {
    loaded = undefined
    throw error
  })
  return loaded
}

/** The legacy pause event's name: only such events need the foreign module. */
export const LEGACY_INTERRUPT_EVENT = 'on_interrupt'

/** Whether an interrupt came from a foreign bridge (its metadata names one); only those need the foreign module. */
export function mayBeForeign(interrupt: Interrupt): boolean {
  const metadata = interrupt.metadata
  return typeof metadata === 'object' && metadata !== null && ('langgraph' in metadata || 'mastra' in metadata)
}
