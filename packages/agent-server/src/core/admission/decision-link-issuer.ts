import type { DecisionLink, DecisionLinkAction, DecisionRecord } from '@interlude/protocol'
import type { Store } from '../../store/store.ts'
import type { BatchTally } from '../access/vote-tally.ts'
import { tallyBatch } from '../access/vote-tally.ts'
import { voteRecords } from '../decision-record.ts'
import { newLinkId, signLink } from '../../auth/decision-link-token.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { OpenedBatch } from '../../webhooks/webhook-outbox.ts'
import type { LinkDecidersOptions } from '../access/link-deciders.ts'
import { linkDeciders } from '../access/link-deciders.ts'
import { decidableOutside } from './outside-answers.ts'

export interface LinkIssuerOptions extends LinkDecidersOptions {
  readonly store: Pick<Store, 'listDecisions'>
  readonly validators: ValidatorCache
  /** Where the server is reached from outside, without a trailing slash (`--public-url`). */
  readonly publicUrl: string
  readonly basePath: string
  /** `linkKey(secret)`. */
  readonly key: Buffer
}

const ACTIONS: readonly DecisionLinkAction[] = ['approve', 'deny']

async function tallyWith(
  options: LinkIssuerOptions,
  batch: { readonly threadId: string; readonly interrupts: OpenedBatch['stored']; readonly runId: string },
  after: DecisionRecord,
): Promise<BatchTally> {
  const records = voteRecords(await options.store.listDecisions(batch.threadId), batch.runId)
  return tallyBatch(batch.interrupts, (item) => options.rights.policyOf(item), [...records, after])
}

/**
 * The decision links of a batch that just opened (docs/approvals.md#deciding-outside-the-app): for each decider the
 * server can name (`linkDeciders`), one link to approve and one to deny the whole batch, each with its own id, valid
 * until the batch's `expiresAt`. None for a batch approve/deny cannot answer (a human tool's question).
 */
export function decisionLinkIssuer(
  options: LinkIssuerOptions,
): (batch: OpenedBatch, after?: DecisionRecord) => Promise<DecisionLink[]> {
  return async (batch, after) => {
    const first = batch.stored[0]
    if (first === undefined || !decidableOutside(options.validators, batch.stored)) return []
    const decidable = { threadId: batch.threadId, interrupts: batch.stored, runId: batch.runId }
    // A record about to be written (an escalation) counts already: the links go to whoever decides after it.
    const tally = after === undefined ? undefined : await tallyWith(options, decidable, after)
    const deciders = await linkDeciders(options, batch.owner, decidable, tally)
    const expiresAt = new Date(batch.expiresAt).toISOString()
    return deciders.flatMap((decider) =>
      ACTIONS.map((action) => {
        const claims = {
          linkId: newLinkId(),
          threadId: batch.threadId,
          interruptId: first.interrupt.id,
          decider,
          action,
          expiresAt: batch.expiresAt,
        }
        const url = `${options.publicUrl}${options.basePath}/decide/${signLink(options.key, claims)}`
        return { decider, action, interruptId: first.interrupt.id, url, expiresAt }
      }),
    )
  }
}
