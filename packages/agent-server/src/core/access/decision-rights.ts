import type { Interrupt, PermissionRule, VoteTally } from '@interlude/protocol'
import type { CanDecide, DecideContext } from '../../agent/decider.ts'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { ServerConfig } from '../../config/server-config.ts'
import type { BatchRecord, Store, StoredInterrupt, ThreadRecord } from '../../store/store.ts'
import { clientThreadId } from '../../store/thread-key.ts'
import { interruptRequest } from '../tools/interrupts.ts'
import type { RuleMaker, RuleUse } from '../tools/permission-rules.ts'
import { allTools, deciderPolicies } from './decider-chain.ts'
import { OPEN_BATCH_STATUS } from '../../store/statuses.ts'
import type { PolicyOf, PrincipalGroups, VotePolicy } from './vote-policy.ts'
import { policyResolver, stageAt } from './vote-policy.ts'
import type { BatchTally } from './vote-tally.ts'
import { pendingTallies, tallyBatch } from './vote-tally.ts'
import { voteRecords } from '../decision-record.ts'
import type { ResolvedGuardrail } from '../../agent/guardrail.ts'

const NO_GUARDRAILS: ReadonlyMap<string, ResolvedGuardrail> = new Map()

export interface DecisionRightsOptions extends Partial<Pick<ServerConfig, 'canDecide' | 'approvers' | 'groups'>> {
  readonly store: Pick<Store, 'getOpenBatch' | 'listDecisions' | 'getBatchOfInterrupt'>
  readonly tools: ReadonlyMap<string, ResolvedTool>
  /** The agent's guardrails by name: a guardrail's `approvers` decide its interrupts (docs/guardrails.md). */
  readonly guardrails?: ReadonlyMap<string, ResolvedGuardrail>
  readonly logError: (message: string, error: unknown) => void
}

/** A rule, or a grant named by its id (`ruleId`) and its `match` (`argsMatch`), as the right to manage it is judged. */
export type ManagedRule = Pick<PermissionRule, 'owner' | 'createdBy' | 'toolName' | 'ruleId' | 'argsMatch' | 'threadId'>

/** The batch fields a decision right depends on (`runId` and `status` find the votes on an open batch). */
export type DecidableBatch = Pick<BatchRecord, 'threadId' | 'interrupts'> &
  Partial<Pick<BatchRecord, 'runId' | 'status'>>

/**
 * Who may decide a batch and who may read a thread (docs/approvals.md, "Who may decide"). A principal decides a
 * batch only if it may decide every interrupt in it: the server's `canDecide`, narrowed by the tool's `approvers`.
 * Reading follows deciding: the owner, or a principal who may decide the thread's open batch or its most recent
 * decided one. Hooks that throw count as "no" (fail closed) and are logged.
 */
export class DecisionRights {
  readonly #o: DecisionRightsOptions
  readonly #canDecide: CanDecide
  /** Who the default `canDecide` lets decide others' batches; `undefined` with a custom one (it may say anything). */
  readonly #deciders: ReadonlySet<string> | undefined
  /** Each interrupt's organisation policy (docs/approvals.md#organisation-policies), groups expanded. */
  readonly #policyOf: PolicyOf

  constructor(options: DecisionRightsOptions) {
    this.#o = options
    this.#policyOf = policyResolver(options.tools, groupsOf(options.groups), options.logError)
    const approvers = options.approvers ?? []
    for (const name of approvers) {
      if (typeof name !== 'string' || name.length === 0) throw new RangeError('approvers must be non-empty strings.')
    }
    for (const tool of allTools(options.tools)) {
      const listed = tool.definition.approvers
      // An empty list would make the tool's interrupts undecidable: the thread could never go on.
      if (Array.isArray(listed) && listed.length === 0)
        throw new RangeError(`Tool "${tool.name}": approvers is empty; name at least one principal.`)
    }
    const allowed = new Set(approvers)
    this.#deciders = options.canDecide ? undefined : allowed
    this.#canDecide = options.canDecide ?? ((principal, ctx) => principal === ctx.owner || allowed.has(principal))
  }

  /** Whether a tool may escalate or remind (a policy from arguments may): the policy sweep has work. */
  hasTimedPolicies(): boolean {
    for (const tool of allTools(this.#o.tools)) {
      const policy = tool.definition.policy
      if (typeof policy === 'function' || policy?.escalate !== undefined || policy?.remind !== undefined) return true
    }
    return false
  }

  /** The organisation policy of one stored interrupt (docs/approvals.md#organisation-policies). */
  policyOf(item: Pick<StoredInterrupt, 'toolName' | 'interrupt' | 'kind'>): VotePolicy {
    return this.#policyOf(item)
  }

  /**
   * Where the votes on an open batch stand, when one of its interrupts counts votes (a quorum, a chain, an
   * escalation); `undefined` otherwise — one answer decides it, as always.
   */
  async tally(batch: DecidableBatch): Promise<BatchTally | undefined> {
    if (batch.runId === undefined || (batch.status !== undefined && batch.status !== OPEN_BATCH_STATUS))
      return undefined
    if (!batch.interrupts.some((item) => this.policyOf(item).counts)) return undefined
    const records = voteRecords(await this.#o.store.listDecisions(batch.threadId), batch.runId)
    return tallyBatch(batch.interrupts, (item) => this.policyOf(item), records)
  }

  /**
   * Whether `principal` may decide every interrupt of `batch` on a thread owned by `owner`: of an open batch, every
   * interrupt still open, in the stage that decides it now (`tally`, read when not given); of a decided one, in any
   * stage.
   */
  async mayDecide(principal: string, owner: string, batch: DecidableBatch, tally?: BatchTally): Promise<boolean> {
    if (batch.interrupts.length === 0) return false
    const votes = tally ?? (await this.tally(batch))
    const open = batch.status === undefined || batch.status === OPEN_BATCH_STATUS
    const verdicts = await Promise.all(
      batch.interrupts.map((item, index) => {
        const state = votes?.interrupts[index]
        if (state?.settled !== undefined) return true
        const stage = state?.stage ?? (open ? 0 : undefined)
        return this.mayDecideInterrupt(principal, owner, clientThreadId(batch.threadId), item, stage)
      }),
    )
    return verdicts.every(Boolean)
  }

  /**
   * What the inbox shows `principal` of `batch`: `undefined` when it does not await this principal's vote (it may not
   * decide it, or already voted on it); else, under a policy that counts votes, what each still open interrupt needs
   * (`votes`, as a vote's `202` answer says it).
   */
  async inboxView(
    principal: string,
    owner: string,
    batch: DecidableBatch,
  ): Promise<{ readonly votes?: VoteTally[] } | undefined> {
    const tally = await this.tally(batch)
    if (!(await this.mayDecide(principal, owner, batch, tally))) return undefined
    if (tally === undefined) return {}
    if (tally.interrupts.some((i) => i.settled === undefined && i.voters.has(principal))) return undefined
    return { votes: pendingTallies(tally) }
  }

  /** Whether `principal` may decide nothing but its own threads' batches (the default `canDecide`, not an approver). */
  decidesOnlyOwn(principal: string): boolean {
    return this.#deciders !== undefined && !this.#deciders.has(principal)
  }

  /** Whether `principal` may read `thread`: snapshot, events, follow, run status (never send input). */
  async mayRead(principal: string, thread: ThreadRecord): Promise<boolean> {
    if (thread.ownerId === principal) return true
    const { store } = this.#o
    const open = await store.getOpenBatch(thread.threadId)
    if (open && (await this.mayDecide(principal, thread.ownerId, open))) return true
    const last = (await store.listDecisions(thread.threadId)).at(-1)
    const firstId = last?.interruptIds[0]
    if (firstId === undefined) return false
    const decided = await store.getBatchOfInterrupt(thread.threadId, firstId)
    return decided !== undefined && (await this.mayDecide(principal, thread.ownerId, decided))
  }

  /**
   * Whether the maker of a remembered rule (or a bounded grant) could decide the call it would approve now: the
   * interrupt the call would raise, judged like any other (docs/approvals.md#remembered-permissions). A call whose
   * policy counts votes (a quorum, a chain, an escalation) is never approved by one maker's rule or grant: it asks.
   */
  async ruleMakerMayDecide(rule: RuleMaker, use: RuleUse): Promise<boolean> {
    const request = interruptRequest(use.tool, use.toolCallId, use.args)
    const interrupt: Interrupt = { ...request, id: `rule-check:${rule.ruleId}` }
    const item = { toolName: use.tool.name, interrupt }
    if (this.policyOf({ kind: 'approval', ...item }).counts) return false
    return this.mayDecideInterrupt(rule.createdBy, use.owner, use.threadId, item)
  }

  /**
   * Whether `principal` may decide a call of `toolName` with `args` on `owner`'s thread `threadId` (the client's id):
   * the approval it raises, judged like any interrupt. Reconciling an effect needs this right.
   */
  mayDecideCall(
    principal: string,
    owner: string,
    threadId: string,
    call: { readonly toolName: string; readonly toolCallId: string; readonly args: unknown },
  ): Promise<boolean> {
    const tool = this.#o.tools.get(call.toolName)
    if (tool === undefined) return Promise.resolve(false)
    const request = interruptRequest(tool, call.toolCallId, call.args)
    const interrupt: Interrupt = { ...request, id: `call-check:${call.toolCallId}` }
    return this.mayDecideInterrupt(principal, owner, threadId, { toolName: tool.name, interrupt })
  }

  /**
   * Whether `principal` could make (or manage) `rule` now: the rule's owner, its maker, or a principal who may decide
   * the call it approves on the owner's thread (docs/approvals.md#remembered-permissions).
   */
  async mayManageRule(principal: string, rule: ManagedRule): Promise<boolean> {
    if (principal === rule.owner || principal === rule.createdBy) return true
    const tool = this.#o.tools.get(rule.toolName)
    if (tool === undefined) return false
    const request = interruptRequest(tool, `rule:${rule.ruleId}`, rule.argsMatch ?? {})
    const interrupt: Interrupt = { ...request, id: `rule-check:${rule.ruleId}` }
    // A principal-wide rule names no thread: the check sees the empty thread id.
    const item = { toolName: tool.name, interrupt }
    return this.mayDecideInterrupt(principal, rule.owner, rule.threadId ?? '', item)
  }

  /**
   * Whether `principal` may decide one interrupt (or the call it stands for) on `owner`'s thread `threadId` (the
   * client's id): `canDecide`, then the `approvers` of every tool in its decider chain. A tool that names
   * `approvers` means four eyes: the owner (the requester) never decides its call unless the tool sets
   * `allowSelfApproval`.
   */
  async mayDecideInterrupt(
    principal: string,
    owner: string,
    threadId: string,
    item: Pick<StoredInterrupt, 'toolName' | 'interrupt'> & Partial<Pick<StoredInterrupt, 'kind'>>,
    stage?: number,
  ): Promise<boolean> {
    const ctx: DecideContext = { owner, threadId, interrupt: item.interrupt }
    try {
      const policy = this.policyOf({ kind: 'approval', ...item })
      if (!mayVoteIn(policy, principal, owner, stage)) return false
      if ((await this.#canDecide(principal, ctx)) !== true) return false
      for (const policy of deciderPolicies(this.#o.tools, this.#o.guardrails ?? NO_GUARDRAILS, item)) {
        const listed = policy.approvers
        if (listed === undefined) continue
        if (principal === owner && policy.allowSelfApproval !== true) return false
        const yes = typeof listed === 'function' ? (await listed(principal, ctx)) === true : listed.includes(principal)
        if (!yes) return false
      }
      return true
    } catch (error) {
      this.#o.logError(`decider check for ${ctx.threadId}/${ctx.interrupt.id} threw`, error)
      return false
    }
  }
}

function groupsOf(groups: PrincipalGroups | undefined): PrincipalGroups {
  for (const [name, members] of Object.entries(groups ?? {})) {
    if (name.length === 0 || !Array.isArray(members) || members.some((m) => typeof m !== 'string' || m.length === 0))
      throw new RangeError(`groups: "${name}" must name non-empty principals.`)
  }
  return groups ?? {}
}

/**
 * A policy's own narrowing (docs/approvals.md#organisation-policies): `notRequester` keeps the owner out, and a stage
 * with `of` admits only its members — the stage given, or any stage (a decided batch, a rule, a reconcile).
 */
function mayVoteIn(policy: VotePolicy, principal: string, owner: string, stage: number | undefined): boolean {
  if (policy.notRequester && principal === owner) return false
  if (stage !== undefined) {
    const of = stageAt(policy, stage).of
    return of === undefined || of.has(principal)
  }
  const stages = policy.escalate ? [...policy.stages, policy.escalate.stage] : policy.stages
  return stages.some((s) => s.of === undefined || s.of.has(principal))
}
