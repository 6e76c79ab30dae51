import { randomUUID } from 'node:crypto'
import { InterludeError } from '@interlude/protocol'
import type { DecisionLinkAction, DecisionRecord, VoteTally } from '@interlude/protocol'
import type { BatchRecord } from '../../store/store.ts'
import type { RunPlan } from '../run-plan.ts'
import type { Admission, AdmissionDeps } from './admission.ts'
import { admitDecision } from './admission.ts'
import { actionEntries, decidableOutside } from './outside-answers.ts'

/** A decision made outside the app: a decision link's claims, or a Slack button with the user it maps to. */
export interface OutsideTarget {
  /** The store's thread key. */
  readonly threadId: string
  /** An interrupt of the batch to decide (the whole batch gets the same answer). */
  readonly interruptId: string
  readonly decider: string
  readonly action: DecisionLinkAction
}

/** A signed link's single use and deadline; Slack buttons have neither. */
export interface OutsideLink {
  readonly linkId: string
  readonly expiresAt: number
}

/**
 * Where a link or button stands (docs/approvals.md#deciding-outside-the-app): `open` — it may decide now; `used` — this
 * link already decided; `gone` — the batch was decided (by someone, `record`) or its deadline passed; `not_found` —
 * no such batch, or the decider may not decide it (any more), or it cannot be decided with approve/deny.
 */
export type OutsideState =
  | { readonly kind: 'open'; readonly batch: BatchRecord; readonly owner: string }
  | { readonly kind: 'used' }
  | { readonly kind: 'gone'; readonly why: 'decided' | 'expired'; readonly record?: DecisionRecord | undefined }
  | { readonly kind: 'not_found' }

/**
 * What deciding did: `decided` — the batch's decision (the turn continues); `voted` — a vote under an organisation
 * policy (docs/approvals.md#organisation-policies) that settles nothing yet (`pending`: what is still missing);
 * `already_voted` — this decider already voted on the batch (through any channel); or the state that stopped it.
 */
export type OutsideOutcome =
  | { readonly kind: 'decided'; readonly runId: string; readonly action: DecisionLinkAction }
  | {
      readonly kind: 'voted'
      readonly runId: string
      readonly action: DecisionLinkAction
      readonly pending: readonly VoteTally[]
    }
  | { readonly kind: 'already_voted' }
  | Exclude<OutsideState, { readonly kind: 'open' }>

export interface OutsideDecisionsDeps {
  readonly admission: AdmissionDeps
  /** Starts an admitted run (`RunManager.start`). */
  readonly start: (plan: RunPlan) => void
  /** Admission turns, as the decisions API takes them. */
  readonly admit?: ((admit: () => Promise<Admission>) => Promise<Admission>) | undefined
}

/**
 * Decisions from outside the app — signed links and Slack buttons — through the one admission of every decision
 * (`admitDecision`, with `via: 'link'` or `'slack'` and the bound decider as `decidedBy`): the same rights, checks,
 * atomic claim and webhooks as the decisions API. Its answers are the states a page or a Slack message shows.
 */
export class OutsideDecisions {
  readonly #deps: OutsideDecisionsDeps

  constructor(deps: OutsideDecisionsDeps) {
    this.#deps = deps
  }

  /** What deciding would meet now; reads only (a `GET` of a link never decides). */
  async state(target: OutsideTarget, link?: OutsideLink): Promise<OutsideState> {
    const { store, rights, validators, now } = this.#deps.admission
    const batch = await store.getBatchOfInterrupt(target.threadId, target.interruptId)
    // The link's use is read after the batch: a link spent between the two reads (its row and the claim commit together)
    // then reads as `used`, not as a batch decided by someone else.
    if (link !== undefined && (await store.decisionLinks.used(link.linkId)) !== undefined) return { kind: 'used' }
    const thread = batch === undefined ? undefined : await store.getThread(target.threadId)
    // The right is judged now, not when the link was made: a decider who lost it learns nothing more.
    if (batch === undefined || thread === undefined) return { kind: 'not_found' }
    if (!(await rights.mayDecide(target.decider, thread.ownerId, batch))) return { kind: 'not_found' }
    if (!decidableOutside(validators, batch.interrupts)) return { kind: 'not_found' }
    if (batch.status !== 'pending') return this.#gone(batch)
    const time = now()
    if (batch.expiresAt <= time || (link !== undefined && link.expiresAt <= time))
      return { kind: 'gone', why: 'expired' }
    return { kind: 'open', batch, owner: thread.ownerId }
  }

  /** Decides, if the state is `open`; else answers the state. */
  async decide(target: OutsideTarget, via: 'link' | 'slack', link?: OutsideLink): Promise<OutsideOutcome> {
    const state = await this.state(target, link)
    if (state.kind !== 'open') return state
    const runId = `run_${randomUUID()}`
    const request = {
      threadId: target.threadId,
      runId,
      resume: actionEntries(state.batch.interrupts, target.action),
      ...(link !== undefined ? { linkId: link.linkId } : {}),
    }
    const { admission } = this.#deps
    const admit = () => admitDecision(admission, target.decider, request, via)
    let admitted: Admission
    try {
      admitted = await (this.#deps.admit ? this.#deps.admit(admit) : admit())
    } catch (error) {
      if (!InterludeError.isInstance(error)) throw error
      if (error.code === 'ALREADY_VOTED') return { kind: 'already_voted' }
      // Lost a race: this link was spent by a concurrent request, or the batch was decided or expired meanwhile.
      if (['DECISION_CONFLICT', 'ALREADY_RESUMED', 'INTERRUPT_EXPIRED', 'THREAD_NOT_FOUND'].includes(error.code)) {
        const now = await this.state(target, link)
        if (now.kind !== 'open') return now
      }
      throw error
    }
    if (admitted.kind === 'voted') return { kind: 'voted', runId, action: target.action, pending: admitted.pending }
    if (admitted.kind === 'start') this.#deps.start(admitted.plan)
    return { kind: 'decided', runId, action: target.action }
  }

  async #gone(batch: BatchRecord): Promise<OutsideState> {
    const { store } = this.#deps.admission
    const runId = batch.claimedByRunId
    const record = runId === undefined ? undefined : await store.getDecision(batch.threadId, runId)
    const expired = batch.status === 'expired' || record?.via === 'expiry'
    return { kind: 'gone', why: expired ? 'expired' : 'decided', record }
  }
}
