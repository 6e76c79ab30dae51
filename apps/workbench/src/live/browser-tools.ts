import type { BrowserTool } from '@interlude/react'

/**
 * The workbench's one browser tool (docs/client-contract.md#browser-tools): the model may ask what page the person
 * is on. It reads only what any script on the page can read, and nothing leaves the browser except its result.
 * The release assistant's scripted model never calls it; an agent that does (a real model, or the e2e suite's
 * release-with-browser agent) gets the page's title, language and clock.
 */
export const READ_PAGE_CONTEXT: BrowserTool = {
  name: 'read_page_context',
  description: "Reads the person's page: its title, the browser's language and the local time.",
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  handler: () => ({
    title: document.title,
    language: navigator.language,
    time: new Date().toISOString(),
  }),
}

export const WORKBENCH_TOOLS: readonly BrowserTool[] = [READ_PAGE_CONTEXT]
