import type { AgUiEvent, BudgetKind } from '@interlude/protocol'
import { budgetInterrupt } from '../guardrails/guardrail-interrupts.ts'
import { endWithNote } from './closing-note.ts'
import { storeBatch } from './tool-step.ts'
import { expiryDefaults } from './run-effect.ts'
import type { Step, Turn } from './turn-state.ts'

/**
 * Budgets (docs/guardrails.md#budgets): before each model call, a run that used its `maxIterations` model calls or its
 * `maxTokensPerRun` tokens pauses with `interlude:budget` — or, with `onBudget: 'stop'`, ends at once with a note.
 * `undefined`: within budget; `'ended'`: the run finished here.
 */
export async function* checkBudget(turn: Turn): AsyncGenerator<AgUiEvent, Step | 'ended' | undefined, undefined> {
  const { iterations, tokens } = turn.guards
  const kind: BudgetKind | undefined =
    iterations.used >= iterations.limit
      ? 'iterations'
      : tokens.limit !== undefined && tokens.used >= tokens.limit
        ? 'tokens'
        : undefined
  if (kind === undefined) return undefined
  if (turn.deps.agent.onBudget === 'stop') {
    yield* endWithNote(turn, exhaustedNote(kind, turn), kind === 'iterations' ? 'max_iterations' : 'budget_exhausted')
    return 'ended'
  }
  return await storeBatch(turn, [budgetInterrupt(turn.plan.runId, kind, turn.guards.counts(), expiryDefaults(turn))])
}

/** The closing note of a run whose budget ran out. */
export function exhaustedNote(kind: BudgetKind, turn: Turn): string {
  const { iterations, tokens } = turn.guards
  return kind === 'iterations'
    ? `I stopped here: this run used its budget of ${iterations.limit} model calls without finishing.`
    : `I stopped here: this run used ${tokens.used} tokens of its budget of ${tokens.limit ?? tokens.used}.`
}
