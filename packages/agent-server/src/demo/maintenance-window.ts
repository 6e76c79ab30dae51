import { askUser } from '../agent/ask-user.ts'
import type { ToolDefinition } from '../agent/tool.ts'

/**
 * The demo's richly presented question (docs/demo-agent.md): every presentation keyword
 * `<InterruptForm>` renders — a titled and described schema, labelled `oneOf` choices as radios and
 * as a select, the date, date-time, email and uri formats, and a textarea — so the forms can be
 * tried offline ("schedule maintenance").
 */
export const MAINTENANCE_WINDOW_SCHEMA = {
  type: 'object',
  title: 'Maintenance window',
  description: 'When the release goes out, how, and who is on call.',
  properties: {
    strategy: {
      type: 'string',
      title: 'Rollout strategy',
      description: 'How traffic moves to the new version.',
      oneOf: [
        { const: 'canary', title: 'Canary (5% first)', description: 'Safest; takes about an hour.' },
        { const: 'blue-green', title: 'Blue/green switch', description: 'Instant; needs twice the capacity.' },
        { const: 'all-at-once', title: 'All at once' },
      ],
      'x-interlude-widget': 'radio',
    },
    region: {
      type: 'string',
      title: 'Region',
      oneOf: [
        { const: 'eu-west', title: 'Europe (Ireland)' },
        { const: 'us-east', title: 'US East (Virginia)' },
      ],
      'x-interlude-widget': 'select',
    },
    day: { type: 'string', format: 'date', title: 'Day' },
    startsAt: { type: 'string', format: 'date-time', title: 'Start time', description: 'In your local time.' },
    contact: { type: 'string', format: 'email', title: 'On-call contact' },
    runbook: { type: 'string', format: 'uri', title: 'Runbook link' },
    notes: { type: 'string', title: 'Notes for on-call', maxLength: 2000, 'x-interlude-widget': 'textarea' },
  },
  required: ['strategy', 'region', 'day', 'startsAt', 'contact'],
  additionalProperties: false,
} as const

export const scheduleMaintenance: ToolDefinition<{ question: string }> = askUser({
  name: 'schedule_maintenance',
  description: 'Ask the user when and how to run a maintenance window.',
  responseSchema: MAINTENANCE_WINDOW_SCHEMA,
})

/** The model's follow-up once the question was answered (or cancelled). */
export function maintenanceSummary(result: unknown): string {
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>
  if (typeof r.strategy !== 'string') return 'No maintenance window was scheduled.'
  const runbook = typeof r.runbook === 'string' ? ` Runbook: ${r.runbook}.` : ''
  return (
    `Maintenance scheduled: ${r.strategy} rollout in ${String(r.region)} on ${String(r.day)}, starting ` +
    `${String(r.startsAt)}; on call: ${String(r.contact)}.${runbook}`
  )
}
