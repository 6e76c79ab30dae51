/** The three interrupt configurations of `@ag-ui/langgraph` (docs/foreign-servers.md#langgraph). */
export const LANGGRAPH_CONFIGS = {
  /** The default: `CUSTOM on_interrupt` and a `RUN_FINISHED` without `outcome`. */
  legacy: {},
  /** Both the legacy event and `RUN_FINISHED { outcome: interrupt }`. */
  outcome: { emitInterruptOutcome: true },
  /** Only the outcome. */
  'outcome-only': { enableLegacyOnInterruptEvent: false },
} as const

export type LangGraphConfig = keyof typeof LANGGRAPH_CONFIGS
