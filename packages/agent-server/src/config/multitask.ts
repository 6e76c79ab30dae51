/**
 * What new input does while its thread runs (docs/protocol.md#multitask): `reject` answers `409 THREAD_BUSY`,
 * `enqueue` stores it to start after the runs before it, `interrupt` cancels the running run and starts it next,
 * `steer` gives its message to the running turn. The list is the protocol's (`@interlude/protocol`).
 */
export { MULTITASK_STRATEGIES } from '@interlude/protocol'
export type { MultitaskStrategy } from '@interlude/protocol'
