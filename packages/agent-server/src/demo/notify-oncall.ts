import { defineTool } from '../agent/tool.ts'

/**
 * `notify_oncall` (docs/demo-agent.md): an external tool. `execute` only dispatches the page (the paging system is
 * simulated: nothing leaves the process); the result arrives later from the on-call system, which may post it itself
 * when the server names it with `--oncall` (`resultFrom`, docs/protocol.md#external-results). Without `--oncall` only
 * the thread's owner can post it.
 */
export function notifyOncall(oncall: readonly string[] = []) {
  return defineTool<{ version: string }>({
    name: 'notify_oncall',
    description: 'Page the on-call engineer about a version; their answer arrives later from the paging system.',
    parameters: {
      type: 'object',
      properties: { version: { type: 'string' } },
      required: ['version'],
      additionalProperties: false,
    },
    external: true,
    ...(oncall.length > 0 ? { resultFrom: [...oncall] } : {}),
  })
}
