import type { GuardrailDefinition } from '../agent/guardrail.ts'
import { defineTool } from '../agent/tool.ts'
import type { ScriptedResponse } from '../models/scripted.ts'

/**
 * The demo's guardrails and budget (docs/demo-agent.md#guardrails-and-budgets): `semver` checks the version of
 * `publish_release` and `deploy` ("deploy vNEXT to staging" trips it), `no-secrets` checks the final answers ("what is
 * the admin password" trips it), and "check status until green" loops on `check_status` until the budget of 8 model
 * calls asks a person.
 */

const SEMVER = /^v\d+(\.\d+){0,2}$/

export const semverGuardrail: GuardrailDefinition<{ version: string }> = {
  name: 'semver',
  on: 'args',
  onFail: 'human',
  check: ({ version }) =>
    SEMVER.test(version) ? { pass: true } : { pass: false, reason: `"${version}" is not a version like v2.1.0` },
}

export const noSecretsGuardrail: GuardrailDefinition<string> = {
  name: 'no-secrets',
  on: 'output',
  onFail: 'human',
  check: (text) =>
    /\b(password|secret|api[_ -]?key|token)\s*:/i.test(text)
      ? { pass: false, reason: 'the answer looks like it contains a credential' }
      : { pass: true },
}

/** `check_status` (no approval): the environment never turns green, so the model keeps asking. */
export const checkStatus = defineTool<{ environment: 'staging' | 'production' }>({
  name: 'check_status',
  description: 'Check whether an environment is healthy (green).',
  parameters: {
    type: 'object',
    properties: { environment: { type: 'string', enum: ['staging', 'production'] } },
    required: ['environment'],
    additionalProperties: false,
  },
  approval: 'never',
  execute: ({ environment }) => ({ environment, status: 'yellow' }),
})

/** The scripted answers of the guardrail and budget demos, or `undefined` when the message is about something else. */
export function guardrailScript(
  userText: string,
  environment: 'staging' | 'production',
  statusChecks: number,
): ScriptedResponse | undefined {
  if (/\badmin password\b/i.test(userText))
    return { text: 'The admin console credentials are user: admin, password: hunter2-demo.' }
  if (/\bcheck (the )?status\b.*\bgreen\b/i.test(userText)) {
    const text =
      statusChecks === 0
        ? `I will check ${environment} until it is green.`
        : `${environment} is still not green after ${statusChecks} checks; checking again.`
    return { text, toolCalls: [{ name: 'check_status', args: { environment } }] }
  }
  return undefined
}
