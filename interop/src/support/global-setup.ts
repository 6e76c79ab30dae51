import type { TestProject } from 'vitest/node'
import { nodeForMastra, startChild, type ChildServer } from './child-server.ts'
import type { LangGraphUrls } from './urls.ts'

/**
 * Starts the real servers once for the whole interop project (both at the same time, several seconds each) and
 * hands their URLs to the test files (`inject`); stops them after the run.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    langgraph: LangGraphUrls
    mastra: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: ChildServer<unknown>[] = []
  const stopAll = async () => {
    await Promise.all(started.map((child) => child.stop()))
  }
  try {
    const [langgraph, mastra] = await Promise.all([
      startChild<LangGraphUrls>('src/langgraph/serve-langgraph.ts').then((c) => (started.push(c), c)),
      startChild<{ mastra: string }>('src/mastra/serve-mastra.ts', { node: nodeForMastra() }).then(
        (c) => (started.push(c), c),
      ),
    ])
    project.provide('langgraph', langgraph.urls)
    project.provide('mastra', mastra.urls.mastra)
  } catch (error) {
    await stopAll()
    throw error
  }
  return stopAll
}
