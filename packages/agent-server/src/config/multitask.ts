/**
 * What new input does while its thread runs (docs/protocol.md#multitask): `reject` answers `409 THREAD_BUSY`,
 * `enqueue` stores it to start after the runs before it, `interrupt` cancels the running run and starts it next.
 */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt'] as const

export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number]
