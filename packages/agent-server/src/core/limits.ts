/** Admission limits (docs/architecture.md); each breach is answered with a typed error before any stream byte. */
export interface Limits {
  /**
   * Request body bytes (`PAYLOAD_TOO_LARGE`). Large enough for clients that re-send the whole
   * history every run (`HttpAgent`); what is new in a request is bounded by the limits below.
   * @default 8 MiB
   */
  readonly maxBodyBytes: number
  /**
   * Nesting depth of the JSON body (objects and arrays; the body itself is depth 1). Deeper
   * bodies are `INVALID_INPUT` with `details: { reason: 'too_deep', maxDepth }`. Checked
   * iteratively right after parsing, so no later serialisation or schema walk can overflow the
   * stack. @default 64
   */
  readonly maxJsonDepth: number
  /**
   * New (unseen) messages in one `RunAgentInput` (`PAYLOAD_TOO_LARGE`). Messages the thread
   * already has (a re-sent history) do not count. @default 1000
   */
  readonly maxMessagesPerInput: number
  /** Bytes of one new (unseen) message as JSON (`PAYLOAD_TOO_LARGE`). @default 1 MiB */
  readonly maxMessageBytes: number
  /** Bytes of one resume payload as JSON (`PAYLOAD_TOO_LARGE`). @default 64 KiB */
  readonly maxPayloadBytes: number
  /**
   * Interrupts in one batch. Calls beyond it get an error result the model can read; a resume
   * with more entries is `INVALID_INPUT`. @default 16
   */
  readonly maxInterruptsPerBatch: number
  /**
   * Bytes of one tool call's arguments as the model streamed them. Larger arguments are rejected (an
   * error result the model reads) and the history keeps a short placeholder instead (issue 14). @default 64 KiB
   */
  readonly maxToolArgumentBytes: number
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxJsonDepth: 64,
  maxMessagesPerInput: 1000,
  maxMessageBytes: 1024 * 1024,
  maxPayloadBytes: 64 * 1024,
  maxInterruptsPerBatch: 16,
  maxToolArgumentBytes: 64 * 1024,
}
