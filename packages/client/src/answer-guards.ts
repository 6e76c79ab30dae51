import type {
  DecisionAccepted,
  ForkCreated,
  ThreadForkList,
  PendingBatchPage,
  PermissionRuleList,
  RunView,
  ThreadSnapshot,
} from '@interlude/protocol'

/**
 * Light structural checks of the JSON answers (docs/approvals.md): enough to fail with a typed
 * `PROTOCOL_ERROR` on something that is not an Interlude server, without shipping a schema library.
 */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

const RUN_STATUSES: readonly string[] = ['running', 'finished', 'failed', 'cancelled', 'interrupted']

export function isPendingBatchPage(value: unknown): value is PendingBatchPage {
  if (!isObject(value) || !Array.isArray(value.items)) return false
  if (value.nextCursor !== undefined && typeof value.nextCursor !== 'string') return false
  return value.items.every(
    (item: unknown) => isObject(item) && typeof item.threadId === 'string' && Array.isArray(item.interrupts),
  )
}

export function isDecisionAccepted(value: unknown): value is DecisionAccepted {
  return isObject(value) && typeof value.threadId === 'string' && typeof value.runId === 'string'
}

export function isRunView(value: unknown): value is RunView {
  return (
    isObject(value) &&
    typeof value.threadId === 'string' &&
    typeof value.runId === 'string' &&
    typeof value.status === 'string' &&
    RUN_STATUSES.includes(value.status)
  )
}

export function isThreadSnapshot(value: unknown): value is ThreadSnapshot {
  return (
    isObject(value) &&
    typeof value.threadId === 'string' &&
    typeof value.revision === 'number' &&
    Array.isArray(value.messages)
  )
}

const SCOPES: readonly string[] = ['thread', 'principal']

export function isPermissionRuleList(value: unknown): value is PermissionRuleList {
  if (!isObject(value) || !Array.isArray(value.items)) return false
  return value.items.every(
    (item: unknown) =>
      isObject(item) &&
      typeof item.ruleId === 'string' &&
      typeof item.toolName === 'string' &&
      typeof item.scope === 'string' &&
      SCOPES.includes(item.scope) &&
      typeof item.createdBy === 'string' &&
      typeof item.createdAt === 'string' &&
      (item.threadId === undefined || typeof item.threadId === 'string') &&
      (item.argsMatch === undefined || isObject(item.argsMatch)),
  )
}

const isForkPoint = (value: unknown): boolean =>
  isObject(value) && (typeof value.messageId === 'string' || typeof value.batchId === 'string')

export function isForkCreated(value: unknown): value is ForkCreated {
  return (
    isObject(value) &&
    typeof value.threadId === 'string' &&
    isObject(value.parent) &&
    typeof value.parent.threadId === 'string' &&
    isForkPoint(value.parent.at)
  )
}

export function isThreadForkList(value: unknown): value is ThreadForkList {
  if (!isObject(value) || !Array.isArray(value.items)) return false
  return value.items.every(
    (item: unknown) =>
      isObject(item) && typeof item.threadId === 'string' && isForkPoint(item.at) && typeof item.createdAt === 'string',
  )
}
