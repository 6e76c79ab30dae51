import type { SnapshotProjection } from './recording-types.ts'

/** A minimal valid snapshot projection for tests. */
export function snapshotOf(overrides: Partial<SnapshotProjection> = {}): SnapshotProjection {
  return {
    threadId: 'thread-1',
    status: 'idle',
    connection: 'idle',
    isLoading: false,
    isResuming: false,
    runId: null,
    messages: [],
    state: {},
    pendingInterrupts: null,
    error: null,
    recovery: { revision: 0, required: false },
    unsettledEffects: [],
    ...overrides,
  }
}
