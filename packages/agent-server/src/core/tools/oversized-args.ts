import type { Verdict } from './tool-verdicts.ts'

/** What the history keeps of oversized arguments: valid JSON that says what happened. */
export function oversizedPlaceholder(bytes: number): string {
  return JSON.stringify({ omitted: `The arguments (${bytes} bytes) were too large and were not kept.` })
}

export function oversizedVerdict(bytes: number, max: number): Verdict {
  return {
    kind: 'reject',
    error: `The arguments were too large (${bytes} bytes, at most ${max}); they were omitted and the call did not run. Call the tool again with smaller arguments.`,
  }
}
