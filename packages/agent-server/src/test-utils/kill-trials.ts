/**
 * A kill delay after admission for the kill -9 trials: 0–20 ms, biased to 3–8 ms (where the issue lost approvals:
 * the resume's tools and the model call run in that window).
 */
export function killDelayMs(random: () => number = Math.random): number {
  return random() < 0.6 ? 3 + random() * 5 : random() * 20
}

/** What the trials counted: calls that ran exactly once, and calls caught mid-effect (reported unknown). */
export function trialTally(): { trials: number; once: number; unknown: number; unknownRan: number } {
  return { trials: 0, once: 0, unknown: 0, unknownRan: 0 }
}
