import { describe, expect, it } from 'vitest'
import { slackSignature, verifySlackRequest } from './slack-signature.ts'

/** The worked example of Slack's "Verifying requests from Slack" page: its secret, timestamp, body and signature. */
const SLACK_EXAMPLE = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
    '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com' +
    '%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
}

describe('Slack request signatures', () => {
  const { secret, timestamp, body, signature } = SLACK_EXAMPLE
  const at = Number(timestamp) * 1000

  it("computes Slack's documented signature and accepts it within five minutes", () => {
    expect(slackSignature(secret, timestamp, body)).toBe(signature)
    expect(verifySlackRequest(secret, { timestamp, signature, body }, at)).toBe(true)
    expect(verifySlackRequest(secret, { timestamp, signature, body }, at + 300_000)).toBe(true)
    expect(verifySlackRequest(secret, { timestamp, signature, body }, at - 300_000)).toBe(true)
  })

  it('refuses a stale or future timestamp, another secret, a changed body and malformed headers', () => {
    expect(verifySlackRequest(secret, { timestamp, signature, body }, at + 301_000)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp, signature, body }, at - 301_000)).toBe(false)
    expect(verifySlackRequest('another-secret', { timestamp, signature, body }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp, signature, body: `${body}&x=1` }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp, signature: signature.toUpperCase(), body }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp, signature: signature.slice(0, -1), body }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp: undefined, signature, body }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp, signature: undefined, body }, at)).toBe(false)
    expect(verifySlackRequest(secret, { timestamp: '1531420618.5', signature, body }, at)).toBe(false)
  })
})
