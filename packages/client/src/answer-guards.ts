import type {
  DecisionAccepted,
  ForkCreated,
  ThreadForkList,
  PendingBatchPage,
  GrantList,
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

/** A list of rules or grants: each names its id (`idKey`), tool, scope, maker and match (`matchKey`). */
function isStandingList(value: unknown, idKey: string, matchKey: string, more = (_: Record<string, unknown>) => true) {
  if (!isObject(value) || !Array.isArray(value.items)) return false
  return value.items.every(
    (item: unknown) =>
      isObject(item) &&
      typeof item[idKey] === 'string' &&
      typeof item.toolName === 'string' &&
      typeof item.scope === 'string' &&
      SCOPES.includes(item.scope) &&
      typeof item.createdBy === 'string' &&
      typeof item.createdAt === 'string' &&
      (item.threadId === undefined || typeof item.threadId === 'string') &&
      (item[matchKey] === undefined || isObject(item[matchKey])) &&
      more(item),
  )
}

export function isPermissionRuleList(value: unknown): value is PermissionRuleList {
  return isStandingList(value, 'ruleId', 'argsMatch')
}

/** A grant list (docs/approvals.md#bounded-grants): calls left and the deadline besides what a rule has. */
export function isGrantList(value: unknown): value is GrantList {
  return isStandingList(
    value,
    'grantId',
    'match',
    (item) =>
      typeof item.calls === 'number' &&
      typeof item.callsLeft === 'number' &&
      (item.until === undefined || typeof item.until === 'string'),
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
