import { inject } from 'vitest'

/** The URLs `src/langgraph/serve-langgraph.ts` prints. */
export interface LangGraphUrls {
  /** The LangGraph API server itself (threads, state). */
  readonly langgraph: string
  /** `@ag-ui/langgraph` behind an AG-UI endpoint: `/{approval|hitl}/{legacy|outcome|outcome-only}`. */
  readonly agui: string
  /** The CopilotKit runtime in front of the bridge: `/agent/{approval|hitl}/run`. */
  readonly copilotkit: string
}

/** The LangGraph stack the global setup started (`src/support/global-setup.ts`). */
export function langGraphStack(): LangGraphUrls {
  return inject('langgraph')
}

/** The graph's own state of a thread (and the nodes still to run), read from the LangGraph API server. */
export async function threadValues(urls: LangGraphUrls, threadId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${urls.langgraph}/threads/${threadId}/state`)
  if (!res.ok) throw new Error(`thread state: ${res.status}`)
  const { values, next } = (await res.json()) as { values: Record<string, unknown>; next: string[] }
  return { ...values, next }
}

/** The content of the graph's last message. */
export function lastGraphMessage(values: Record<string, unknown>): unknown {
  return (values.messages as { content?: unknown }[] | undefined)?.at(-1)?.content
}
