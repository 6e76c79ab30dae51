import { BUDGET_INTERRUPT_REASON, GUARDRAIL_INTERRUPT_REASON } from '@interlude/protocol'
import type { BudgetKind, ExpiryPolicy, GuardrailMetadata, Interrupt } from '@interlude/protocol'
import { BUDGET_RESPONSE_SCHEMA, GUARDRAIL_RESPONSE_SCHEMA } from '../../agent/guardrail.ts'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { ExpiryDefaults } from '../expiry-policy.ts'
import type { PendingInterrupt } from '../tools/interrupts.ts'
import type { GuardrailFailure } from './guardrail-checks.ts'
import { interruptId } from './guardrail-checks.ts'

/**
 * The interrupts of a failed `onFail: 'human'` guardrail and of a reached budget (docs/guardrails.md). Stored like any
 * other interrupt (kinds `guardrail` and `budget`), so the same admission, deadlines and decision records apply.
 * Neither has an answer that denies by default: at their deadline they are cancelled (a guardrail blocks, a budget
 * ends the run), unless the server keeps batches open.
 */

/** Where a message guardrail's interrupt is stored (it has no tool call): a key that names the message. */
export function messageKey(messageId: string): string {
  return `guardrail:${messageId}`
}

function expiryOf(expiry: ExpiryDefaults): ExpiryPolicy {
  return expiry.onExpiry === 'keep' ? 'keep' : 'cancel'
}

/** A call whose arguments a guardrail stopped: allow lets it go on to its approval (or run), block denies it. */
export function guardrailCallInterrupt(
  tool: ResolvedTool,
  toolCallId: string,
  args: unknown,
  failure: GuardrailFailure,
  expiry: ExpiryDefaults,
): PendingInterrupt {
  const { guardrail, reason } = failure
  const metadata: GuardrailMetadata = {
    guardrail: guardrail.name,
    on: 'args',
    reason,
    toolCallId,
    toolName: tool.name,
    arguments: args,
  }
  const interrupt: Interrupt = {
    id: interruptId(),
    reason: GUARDRAIL_INTERRUPT_REASON,
    message: `The guardrail "${guardrail.name}" stopped ${tool.name}: ${reason}`,
    toolCallId,
    responseSchema: GUARDRAIL_RESPONSE_SCHEMA,
    metadata: { ...metadata },
  }
  return {
    stored: { kind: 'guardrail', toolCallId, toolName: tool.name, interrupt },
    timeoutMs: tool.timeoutMs ?? expiry.ttlMs,
    onExpiry: expiryOf(expiry),
  }
}

/** A user message (`input`) or a final answer (`output`) a guardrail stopped, with its text. */
export function guardrailMessageInterrupt(
  on: 'input' | 'output',
  message: { readonly id: string; readonly content: string },
  failure: GuardrailFailure,
  expiry: ExpiryDefaults,
): PendingInterrupt {
  const { guardrail, reason } = failure
  const metadata: GuardrailMetadata = {
    guardrail: guardrail.name,
    on,
    reason,
    messageId: message.id,
    content: message.content,
  }
  const what = on === 'output' ? 'the answer' : 'your message'
  const interrupt: Interrupt = {
    id: interruptId(),
    reason: GUARDRAIL_INTERRUPT_REASON,
    message: `The guardrail "${guardrail.name}" stopped ${what}: ${reason}`,
    responseSchema: GUARDRAIL_RESPONSE_SCHEMA,
    metadata: { ...metadata },
  }
  return {
    stored: { kind: 'guardrail', toolCallId: messageKey(message.id), toolName: '', interrupt },
    timeoutMs: expiry.ttlMs,
    onExpiry: expiryOf(expiry),
  }
}

/** What a budget interrupt carries besides `{ kind, used, limit }`: the run's counts, so a resume goes on from them. */
export interface BudgetCounts {
  readonly iterations: { readonly used: number; readonly limit: number }
  readonly tokens: { readonly used: number; readonly limit: number | undefined }
}

export function budgetInterrupt(
  runId: string,
  kind: BudgetKind,
  counts: BudgetCounts,
  expiry: ExpiryDefaults,
): PendingInterrupt {
  const { used, limit } = counts[kind]
  const what = kind === 'iterations' ? `${used} of ${limit ?? used} model calls` : `${used} of ${limit ?? used} tokens`
  const interrupt: Interrupt = {
    id: interruptId(),
    reason: BUDGET_INTERRUPT_REASON,
    message: `This run used ${what}. Extend its budget to go on?`,
    responseSchema: BUDGET_RESPONSE_SCHEMA,
    metadata: { kind, used, limit: limit ?? used, counts },
  }
  return {
    stored: { kind: 'budget', toolCallId: `budget:${runId}`, toolName: '', interrupt },
    timeoutMs: expiry.ttlMs,
    onExpiry: expiryOf(expiry),
  }
}
