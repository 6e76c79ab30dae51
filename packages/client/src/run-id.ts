/**
 * A fresh decision run id, `run_<uuid>`. `crypto.randomUUID` is a global in browsers, Deno, Workers
 * and Node ≥ 19, so no import is needed.
 */
export function newRunId(): string {
  return `run_${crypto.randomUUID()}`
}
