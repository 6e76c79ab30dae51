import type { Message } from '@interlude/protocol'
import type { ResolvedAgent } from '../../agent/agent.ts'
import type { ResolvedGuardrail } from '../../agent/guardrail.ts'
import type { BudgetCounts } from '../guardrails/guardrail-interrupts.ts'

/**
 * What one run keeps for its guardrails and budgets (docs/guardrails.md): retries used per guardrail, the notes the
 * next model call alone reads (why its last answer was dropped), and the model calls and tokens against their limits.
 */
export class TurnGuards {
  readonly #retries = new Map<string, number>()
  #notes: Message[] = []
  iterations: { used: number; limit: number }
  tokens: { used: number; limit: number | undefined }

  constructor(agent: ResolvedAgent) {
    this.iterations = { used: 0, limit: agent.maxIterations }
    this.tokens = { used: 0, limit: agent.maxTokensPerRun }
  }

  /** Whether `guardrail` may still ask the model again in this run. */
  mayRetry(guardrail: ResolvedGuardrail): boolean {
    return (this.#retries.get(guardrail.name) ?? 0) < guardrail.maxRetries
  }

  /** One retry of `guardrail`, with the note the next model call reads (an `args` retry's is the call's result). */
  retry(guardrail: ResolvedGuardrail, note?: Message): void {
    this.#retries.set(guardrail.name, (this.#retries.get(guardrail.name) ?? 0) + 1)
    if (note) this.#notes.push(note)
  }

  /** The notes for the next model call (read once: never stored, never sent twice). */
  takeNotes(): Message[] {
    const notes = this.#notes
    this.#notes = []
    return notes
  }

  counts(): BudgetCounts {
    return { iterations: { ...this.iterations }, tokens: { ...this.tokens } }
  }

  /** A resumed run goes on from the counts its budget interrupt stored, with the person's extension. */
  restore(counts: BudgetCounts): void {
    this.iterations = { ...counts.iterations }
    this.tokens = { ...counts.tokens }
  }
}
