import fs from 'node:fs'
import type { SlackOptions } from './config/outside-options.ts'
import { resolveSlack, SLACK_SIGNING_SECRET_ENV } from './config/outside-options.ts'

/**
 * `--slack-user-map`: `U123=alice,U456=bob` (pairs, comma- or space-separated), or the path of a JSON file
 * `{ "U123": "alice" }`. A value with `=` is pairs; anything else a file.
 */
export function slackUserMap(value: string): Record<string, string> {
  const users: Record<string, string> = {}
  const add = (user: string, principal: unknown) => {
    if (user === '' || typeof principal !== 'string' || principal === '' || principal !== principal.trim())
      throw new Error('--slack-user-map maps Slack user ids to principal names (U123=alice)')
    if (users[user] !== undefined) throw new Error(`--slack-user-map names ${user} twice`)
    users[user] = principal
  }
  if (value.includes('=')) {
    for (const pair of value.split(/[\s,]+/).filter(Boolean)) {
      const eq = pair.indexOf('=')
      add(pair.slice(0, eq), pair.slice(eq + 1))
    }
  } else {
    let parsed: unknown
    try {
      parsed = JSON.parse(fs.readFileSync(value, 'utf8'))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new Error(`--slack-user-map ${value}: ${code ?? 'not a JSON object of Slack user id → principal'}`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`--slack-user-map ${value}: not a JSON object of Slack user id → principal`)
    for (const [user, principal] of Object.entries(parsed)) add(user, principal)
  }
  if (Object.keys(users).length === 0) throw new Error('--slack-user-map maps no Slack user')
  return users
}

/**
 * `--slack-user-map` and `--slack-webhook` (docs/approvals.md#slack), checked like the server checks them: the
 * signing secret from `INTERLUDE_SLACK_SIGNING_SECRET`; a webhook's buttons need a user map to be answered.
 */
export function slackFlags(
  userMap: string | undefined,
  webhookUrl: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): SlackOptions | undefined {
  if (userMap === undefined && webhookUrl === undefined) return undefined
  if (userMap === undefined) throw new Error('--slack-webhook needs --slack-user-map (who each Slack user decides as)')
  const options: SlackOptions = { users: slackUserMap(userMap), ...(webhookUrl !== undefined ? { webhookUrl } : {}) }
  try {
    resolveSlack(options, env)
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^slack\.webhookUrl/, '--slack-webhook') : ''
    throw new Error(`${reason} (Slack's signing secret comes from ${SLACK_SIGNING_SECRET_ENV})`)
  }
  return options
}
