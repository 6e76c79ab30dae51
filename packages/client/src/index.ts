export { createDecisionsClient } from './decisions-client.ts'
export type {
  DecideOptions,
  DecisionsClient,
  ForkOptions,
  PendingOptions,
  PermissionRulesOptions,
  ThreadOwnerOption,
  WaitForRunOptions,
} from './decisions-client.ts'
export type { DecisionsClientOptions, Lazy } from './client-options.ts'
export { approveAll, cancelAll, denyAll } from './decision-entries.ts'
export type { ApproveAllOptions, BatchLike } from './decision-entries.ts'
export { decisionOf } from './decision-event.ts'
export type { FollowedEvent, FollowOptions } from './follow.ts'
export type { BackoffOptions } from './backoff.ts'
export { newRunId } from './run-id.ts'
