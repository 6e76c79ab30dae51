/** The URLs `src/langgraph/serve-langgraph.ts` prints. */
export interface LangGraphUrls {
  /** The LangGraph API server itself (threads, state). */
  readonly langgraph: string
  /** `@ag-ui/langgraph` behind an AG-UI endpoint: `/{approval|hitl}/{legacy|outcome|outcome-only}`. */
  readonly agui: string
  /** The CopilotKit runtime in front of the bridge: `/agent/{approval|hitl}/run`. */
  readonly copilotkit: string
}
