import { defineTool } from '../agent/tool.ts'

/** What the demo records of a changelog check (docs/demo-agent.md). */
export interface ChangelogCheck {
  readonly version: string
  readonly toolCallId: string
}

interface ChangelogState {
  changelogChecks?: ChangelogCheck[]
}

/**
 * `check_changelog` needs no approval. "check the changelog and deploy vX to <env>" calls it in the same response as
 * `deploy`: under the default `pausePolicy: 'hold'` it runs only once the deploy is decided, before the deploy
 * (docs/decisions.md#a-turn-keeps-its-promises); `state.changelogChecks` shows when and how often it ran.
 */
export const checkChangelog = defineTool<{ version: string }, ChangelogState>({
  name: 'check_changelog',
  description: 'Check the changelog of a version before it is deployed.',
  parameters: {
    type: 'object',
    properties: { version: { type: 'string', minLength: 1, maxLength: 64 } },
    required: ['version'],
    additionalProperties: false,
  },
  approval: 'never',
  execute: ({ version }, ctx) => {
    const check: ChangelogCheck = { version, toolCallId: ctx.idempotencyKey }
    ctx.updateState((state) => {
      const checks = state.changelogChecks ?? []
      return checks.some((c) => c.toolCallId === check.toolCallId)
        ? state
        : { ...state, changelogChecks: [...checks, check] }
    })
    return { checked: version, entries: [`${version}: fixes and improvements`] }
  },
})

/** "check the changelog and deploy vX to <env>": both calls in one model response. */
export function checksChangelog(text: string): boolean {
  return /\bchangelog\b/i.test(text) && /\bdeploy\b/i.test(text)
}
