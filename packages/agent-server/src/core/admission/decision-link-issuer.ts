import type { DecisionLink, DecisionLinkAction } from '@interlude/protocol'
import { newLinkId, signLink } from '../../auth/decision-link-token.ts'
import type { ValidatorCache } from '../../schema/validator-cache.ts'
import type { OpenedBatch } from '../../webhooks/webhook-outbox.ts'
import type { LinkDecidersOptions } from '../access/link-deciders.ts'
import { linkDeciders } from '../access/link-deciders.ts'
import { decidableOutside } from './outside-answers.ts'

export interface LinkIssuerOptions extends LinkDecidersOptions {
  readonly validators: ValidatorCache
  /** Where the server is reached from outside, without a trailing slash (`--public-url`). */
  readonly publicUrl: string
  readonly basePath: string
  /** `linkKey(secret)`. */
  readonly key: Buffer
}

const ACTIONS: readonly DecisionLinkAction[] = ['approve', 'deny']

/**
 * The decision links of a batch that just opened (docs/approvals.md#deciding-outside-the-app): for each decider the
 * server can name (`linkDeciders`), one link to approve and one to deny the whole batch, each with its own id, valid
 * until the batch's `expiresAt`. None for a batch approve/deny cannot answer (a human tool's question).
 */
export function decisionLinkIssuer(options: LinkIssuerOptions): (batch: OpenedBatch) => Promise<DecisionLink[]> {
  return async (batch) => {
    const first = batch.stored[0]
    if (first === undefined || !decidableOutside(options.validators, batch.stored)) return []
    const deciders = await linkDeciders(options, batch.owner, { threadId: batch.threadId, interrupts: batch.stored })
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
