/** Admission limits (DESIGN §3); each breach is answered with a typed error before any stream byte. */
export interface Limits {
  /** Request body bytes (`PAYLOAD_TOO_LARGE`). @default 1 MiB */
  readonly maxBodyBytes: number
  /** Messages in one `RunAgentInput` (`PAYLOAD_TOO_LARGE`). @default 1000 */
  readonly maxMessagesPerInput: number
  /** Bytes of one resume payload as JSON (`PAYLOAD_TOO_LARGE`). @default 64 KiB */
  readonly maxPayloadBytes: number
  /**
   * Interrupts in one batch. Calls beyond it get an error result the model can read; a resume
   * with more entries is `INVALID_INPUT`. @default 16
   */
  readonly maxInterruptsPerBatch: number
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 1024 * 1024,
  maxMessagesPerInput: 1000,
  maxPayloadBytes: 64 * 1024,
  maxInterruptsPerBatch: 16,
}
