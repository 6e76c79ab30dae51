import type { ResolvedAgent } from '../agent/agent.ts'
import type { ServerConfig } from '../config/server-config.ts'
import { DecisionRights } from '../core/access/decision-rights.ts'
import { decisionLinkIssuer } from '../core/admission/decision-link-issuer.ts'
import { decidableOutside } from '../core/admission/outside-answers.ts'
import { ExpirySweeper } from '../core/expiry/expiry-sweeper.ts'
import { PolicySweeper } from '../core/expiry/policy-sweeper.ts'
import { EventHub } from '../core/log/event-hub.ts'
import { LogWatcher } from '../core/log/log-watcher.ts'
import { OpenBatchCache } from '../core/open-batch-cache.ts'
import { AdmissionTurns } from '../core/runs/admission-turns.ts'
import { RunRecovery } from '../core/runs/recovery.ts'
import { RunManager } from '../core/runs/run-manager.ts'
import { ShutdownState } from '../core/runs/shutdown.ts'
import type { UsageOptions } from '../config/server-options.ts'
import type { ModelUsage } from '../models/model.ts'
import type { Logger } from '../observability/logger.ts'
import { ServerMetrics } from '../observability/metrics.ts'
import { logRunEvents } from '../observability/run-log.ts'
import type { ValidatorCache } from '../schema/validator-cache.ts'
import type { Store } from '../store/store.ts'
import { WebhookOutbox } from '../webhooks/webhook-outbox.ts'
import { WebhookSender } from '../webhooks/webhook-sender.ts'
import { slackOutboxRow } from '../webhooks/slack-message.ts'

/**
 * The parts of one server process besides its routes, built from the resolved config. `server-lifecycle.ts` starts
 * and stops them, in one order each.
 */
export interface ServerParts {
  readonly config: ServerConfig
  /** The store with typed errors (`withTypedErrors`). */
  readonly store: Store
  readonly agent: ResolvedAgent
  readonly validators: ValidatorCache
  readonly hub: EventHub
  readonly metrics: ServerMetrics
  readonly rights: DecisionRights
  readonly webhooks: WebhookOutbox
  /** Delivers the outbox; `undefined` without endpoints. */
  readonly sender: WebhookSender | undefined
  /** The open batches this process wrote or read: their resumes are admitted with the claim alone. */
  readonly openBatches: OpenBatchCache
  /** Under a burst, admissions take turns with the database's answers; `undefined` with `admissionTurns: false`. */
  readonly turns: AdmissionTurns | undefined
  readonly runs: RunManager
  readonly recovery: RunRecovery
  readonly expirySweeper: ExpirySweeper
  /** Escalations and reminders of organisation policies (docs/approvals.md#organisation-policies). */
  readonly policySweeper: PolicySweeper
  readonly watcher: LogWatcher
  readonly feed: ChangeFeed
  /** A graceful shutdown's flag (`503 SERVER_SHUTTING_DOWN`, readiness) and the end of the streams it hands over. */
  readonly draining: ShutdownState
  /** Aborted when the server stops: ends the thread routes' live tails. */
  readonly closing: AbortController
}

export function createServerParts(
  config: ServerConfig,
  agent: ResolvedAgent,
  store: Store,
  validators: ValidatorCache,
): ServerParts {
  const { now, logger, logError, webhooks: endpoints } = config
  // The server clock: outbox rows are stamped with it, so their due times and locks are read with it too.
  // Built even without endpoints, so bad `webhookDelivery` settings are refused here; it runs only with endpoints.
  const slackWebhook = config.slack?.webhookUrl
  const buttonKey = config.slack?.buttonKey
  // A Slack incoming webhook is called like an endpoint, without a Standard Webhooks signature (docs/approvals.md#slack).
  const targets = [...endpoints, ...(slackWebhook !== undefined ? [{ url: slackWebhook }] : [])]
  const built = new WebhookSender({ ...config.webhookDelivery, store, endpoints: targets, logError, now, log: logger })
  const sender = targets.length > 0 ? built : undefined
  const rights = new DecisionRights({ ...config, store, tools: agent.tools, guardrails: agent.guardrailsByName })
  const webhooks = new WebhookOutbox(endpoints, () => sender?.wake(), {
    links: config.links
      ? decisionLinkIssuer({ ...config.links, ...config, store, rights, validators, ...agentTools(agent) })
      : undefined,
    rows:
      slackWebhook !== undefined && buttonKey !== undefined
        ? (batch) =>
            decidableOutside(validators, batch.stored) ? [slackOutboxRow(slackWebhook, buttonKey, batch)] : []
        : undefined,
  })
  const hub = new EventHub()
  const openBatches = new OpenBatchCache()
  const turns = config.admissionTurns === false ? undefined : new AdmissionTurns(config.admissionTurns)
  const runs = new RunManager({
    ...config,
    store,
    hub,
    agent,
    validators,
    webhooks,
    openBatches,
    turns,
    ruleMakerMayDecide: (rule, use) => rights.ruleMakerMayDecide(rule, use),
    // `metrics` is read when a model call reports usage, after construction.
    usage: reportedUsage(config.usage, logger, (usage) => metrics.recordModelUsage(usage)),
  })
  const metrics = new ServerMetrics({ activeRuns: () => runs.activeCount, processMetrics: config.processMetrics })
  // Runs and interrupts are counted and logged from the events this process commits.
  hub.tap((threadId, events) => {
    metrics.observeEvents(events)
    logRunEvents(logger, threadId, events)
  })
  return {
    config,
    store,
    agent,
    validators,
    hub,
    metrics,
    rights,
    webhooks,
    sender,
    openBatches,
    turns,
    runs,
    recovery: new RunRecovery({ ...config, store, hub, agent, runs, webhooks, log: logger }),
    expirySweeper: new ExpirySweeper({
      store,
      runs,
      validators,
      now,
      logError,
      webhooks,
      log: logger,
      sweepMs: config.expirySweepMs,
    }),
    policySweeper: new PolicySweeper({ store, rights, now, logError, webhooks, sweepMs: config.expirySweepMs }),
    watcher: new LogWatcher({ ...config, store, hub }),
    feed: changeFeed(store, hub, runs),
    draining: new ShutdownState(),
    closing: new AbortController(),
  }
}

/** The tools and guardrails whose `approvers` name deciders. */
function agentTools(agent: ResolvedAgent) {
  return { tools: agent.tools, guardrails: agent.guardrailsByName }
}

/** The store's change feed, where it has one (PostgreSQL): wake-ups from other processes. */
export interface ChangeFeed {
  start(): void
  stop(): void
}

/** Appended events wake this process's live tails; cancel requests reach its runs. */
function changeFeed(store: Store, hub: EventHub, runs: RunManager): ChangeFeed {
  let unwatch: (() => void) | undefined
  return {
    start: () => {
      unwatch ??= store.watch?.((change) => {
        if (change.kind === 'events') hub.wake(change.threadId, change.seq)
        else runs.cancel(change.threadId, change.runId)
      })
    },
    stop: () => {
      unwatch?.()
      unwatch = undefined
    },
  }
}

/** Every model call's usage: a structured log line and the token counter, then the host's own hook. */
function reportedUsage(usage: UsageOptions, logger: Logger, count: (usage: ModelUsage) => void): UsageOptions {
  return {
    ...usage,
    onUsage: (report) => {
      logger.info(
        {
          event: 'model.usage',
          threadId: report.threadId,
          runId: report.runId,
          model: report.model,
          inputTokens: report.usage.inputTokens,
          outputTokens: report.usage.outputTokens,
        },
        'model call usage',
      )
      count(report.usage)
      usage.onUsage?.(report)
    },
  }
}
