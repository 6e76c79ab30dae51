import { inject } from 'vitest'
import type { LangGraphUrls } from './urls.ts'

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
