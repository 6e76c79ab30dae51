import type { AgUiEvent, Message } from '@interlude/protocol'
import { interruptProblems } from '@interlude/protocol'
import type { ChatStore } from './chat-store.ts'
import { DeltaInbox } from './delta-inbox.ts'
import { Follower } from './follower.ts'
import type { DriverHost, Settlement } from './driver.ts'
import { driveInteraction } from './driver.ts'
import { protocolViolation } from './errors.ts'
import { deepFreeze, frozenJsonCopy } from './immutable.ts'
import type { InteractionRequest } from './interaction-plan.ts'
import { planInteraction, requestConfig } from './interaction-plan.ts'
import { ListenerSet } from './listener-set.ts'
import type { ResolvedOptions } from './options.ts'
import type { CoreState, Interaction, Settled } from './reducer.ts'
import type { ServerFeatures } from './server-features.ts'
import type { Transport } from './transport.ts'
import type { ConnectionStatus, FinishInfo, InteractionOutcome } from './types.ts'

/** How an interaction ends: as the driver settles it, or stopped locally. */
type Ending = Settlement | { readonly outcome: 'stopped' }

/** What the interactions read from their runtime, live (options and transport may change). */
export interface InteractionsEnv<TState> {
  readonly store: ChatStore<TState>
  readonly options: () => ResolvedOptions<TState>
  readonly transport: () => Transport
  readonly features: ServerFeatures
}

/**
 * The runtime's effects: the live interaction with its generation and AbortController, the delta
 * inbox, settlement, and the driver's host (`DriverHost`: what `driver.ts` may read and commit).
 * Commit policy (docs/react-runtime.md#commits-and-coalescing): a start, every lifecycle step and a settlement commit
 * synchronously, each once; content deltas are buffered and committed together, always before the
 * next lifecycle commit.
 */
export class Interactions<TState> implements DriverHost {
  readonly #store: ChatStore<TState>
  readonly #env: InteractionsEnv<TState>
  readonly #inbox: DeltaInbox
  readonly #controllers = new Map<number, AbortController>()
  readonly #waiters = new Map<number, () => void>()
  #gen = 0
  #disposed = false
  #claimId: string | undefined
  readonly #follower: Follower
  /** Called after every interaction settles (after the settling commit), like `onFinish`. */
  readonly finished = new ListenerSet<[FinishInfo]>()

  constructor(env: InteractionsEnv<TState>) {
    this.#env = env
    this.#store = env.store
    this.#inbox = new DeltaInbox(
      () => env.options().throttleMs,
      () => this.flush(),
    )
    this.#follower = new Follower({
      store: env.store as ChatStore<unknown>,
      features: env.features,
      options: env.options,
      transport: env.transport,
      join: (runId, from) => {
        if (!this.#store.state.run && !this.#disposed) void this.start({ kind: 'attach', runId, from })
      },
    })
    // Internal, not an external side effect: the follower opens nothing until a batch is pending.
    env.store.subscribe(() => this.#follower.sync(this.#disposed))
  }

  get disposed(): boolean {
    return this.#disposed
  }

  isCurrent(gen: number): boolean {
    return !this.#disposed && this.#store.state.run?.gen === gen
  }

  /** Starts an interaction: one commit, then the request on a microtask (a same-tick stop sends nothing). */
  start(request: InteractionRequest): Promise<void> {
    const gen = ++this.#gen
    const controller = new AbortController()
    this.#controllers.set(gen, controller)
    const s = this.#store.state
    const options = this.#env.options()
    const runId = request.kind === 'attach' ? request.runId : options.generateId()
    const config = requestConfig(options)
    const run: Interaction = {
      gen,
      kind: request.kind,
      runId,
      acknowledged: false,
      resumeAcknowledged: false,
      phase: 'submitted',
      connection: 'idle',
      fault: undefined,
    }
    const plan = planInteraction(request, s, { gen, threadId: s.threadId, signal: controller.signal, config }, runId)
    const done = new Promise<void>((resolve) => this.#waiters.set(gen, resolve))
    const messages = request.kind === 'send' ? request.messages : undefined
    this.#store.commit({ type: 'interaction/started', run, messages })
    queueMicrotask(() => {
      if (this.isCurrent(gen)) void driveInteraction(this, plan)
    })
    return done
  }

  /** `stop()`: aborts locally; after acknowledgement the run is cancelled on the server too. */
  stop(): void {
    const run = this.#store.state.run
    if (!run || this.#disposed) return
    this.#controllers.get(run.gen)?.abort()
    const transport = this.#env.transport()
    const features = this.#env.features
    // A plain AG-UI server has no cancel route: closing the stream is all it gets. Once the request is on its way the
    // server may admit it after this stop: cancel it by the runId we sent (the server keeps the cancel for a run it
    // admits slightly later: docs/protocol.md#post-basethreadsthreadidrunsrunidcancel).
    if ((run.acknowledged || run.connection !== 'idle') && transport.cancel && features.available) {
      transport.cancel(this.#store.state.threadId, run.runId).catch((error: unknown) => features.observe(error))
    }
    this.settle(run.gen, { outcome: 'stopped' })
  }

  /** A different thread, as one commit with the dropped deltas; the retired run reports its own thread. */
  changeThread(threadId: string): void {
    const { run, threadId: previous } = this.#store.state
    this.#store.transaction(() => {
      this.#inbox.drop()
      this.#store.dispatch({ type: 'thread/changed', threadId })
    })
    if (run) this.#finish(run, 'retired', undefined, previous)
  }

  /** Commits buffered deltas now (the throttle timer, the driver before it reads content, tests). */
  flush(): void {
    if (this.#inbox.pending) this.#store.transaction(() => this.#flushInbox())
  }

  /** Aborts everything local (server work is not cancelled) and resolves every pending promise. */
  dispose(): void {
    this.#disposed = true
    for (const c of this.#controllers.values()) c.abort()
    this.#controllers.clear()
    this.#inbox.drop()
    for (const resolve of this.#waiters.values()) resolve()
    this.#waiters.clear()
    this.finished.clear()
    this.#follower.sync(true)
  }

  settle(gen: number, settlement: Ending): void {
    const run = this.#store.state.run
    if (!run || run.gen !== gen) return
    const settled = this.#publish(settlement)
    this.#abort(gen)
    this.#store.transaction(() => {
      // The final deltas, the checkpoint and the batch/flags are one commit.
      this.#flushInbox()
      this.#store.dispatch({ type: 'interaction/settled', gen, ...settled })
    })
    this.#finish(run, settled.outcome, settled.outcome === 'failed' ? settled.error : undefined)
  }

  /** An interrupt outcome becomes a batch with a fresh local token, or a failure when it is invalid. */
  #publish(settlement: Ending): Settled {
    if (settlement.outcome !== 'interrupt') return settlement
    const problem = interruptProblems(settlement.interrupts)[0]
    if (problem)
      return {
        outcome: 'failed',
        error: protocolViolation(`Invalid interrupt outcome (${problem.path}: ${problem.problem}).`),
      }
    // A fresh local token per published batch, also when the server reuses interrupt ids.
    const interrupts = Object.freeze(frozenJsonCopy(settlement.interrupts))
    return { outcome: 'interrupt', batch: Object.freeze({ id: this.#env.options().generateId(), interrupts }) }
  }

  #finish(
    run: Interaction,
    outcome: InteractionOutcome,
    error: FinishInfo['error'],
    threadId: string = this.#store.state.threadId,
  ): void {
    this.#abort(run.gen)
    const resolve = this.#waiters.get(run.gen)
    this.#waiters.delete(run.gen)
    const info: FinishInfo = { outcome, threadId, resumed: run.kind === 'resume', ...(error && { error }) }
    // Application callbacks run after the settling commit. A throwing `onError`/`onFinish` must not
    // escape into the command that settled the interaction (`stop()`, `setThreadId()`, a stream
    // callback): it is caught and reported with `console.error`, and the remaining callbacks run.
    if (error) report('onError', () => this.#env.options().onError?.(error))
    report('onFinish', () => this.#env.options().onFinish?.(info))
    this.finished.emit(info)
    resolve?.()
  }

  #abort(gen: number): void {
    this.#controllers.get(gen)?.abort()
    this.#controllers.delete(gen)
  }

  /** Must run inside a transaction. */
  #flushInbox(): void {
    const batch = this.#inbox.take()
    if (!batch || !this.isCurrent(batch.gen)) return
    const { gen } = batch
    this.#store.dispatch({ type: 'run/events', gen, events: batch.events, lastEventId: batch.lastEventId })
    const fault = this.#store.state.run?.fault
    // Can't apply what the server sent: fail the run rather than show a wrong conversation.
    if (fault !== undefined)
      queueMicrotask(() => this.settle(gen, { outcome: 'failed', error: protocolViolation(fault) }))
  }

  // ---------------------------------------------------------------- DriverHost (for driver.ts)

  settings(): ResolvedOptions<TState> {
    return this.#env.options()
  }

  /** One claim id for this runtime's life: its browser-call claims are one tab's (./tool-claims.ts). */
  claimId(): string {
    this.#claimId ??= this.#env.options().generateId()
    return this.#claimId
  }

  transport(): Transport {
    return this.#env.transport()
  }

  features(): ServerFeatures {
    return this.#env.features
  }

  read(): CoreState {
    return this.#store.state
  }

  observe(_gen: number, event: AgUiEvent, id: string | undefined, runId: string): void {
    try {
      this.#env.options().onEvent?.(event, { id, runId, threadId: this.#store.state.threadId })
    } catch {
      // An observer must not break the stream.
    }
  }

  enqueue(gen: number, event: AgUiEvent, id: string | undefined): void {
    this.#inbox.push(gen, event, id)
  }

  connection(gen: number, connection: ConnectionStatus): void {
    this.#store.commit({ type: 'run/connection', gen, connection })
  }

  acknowledge(gen: number, runId: string, id: string | undefined): void {
    this.#store.transaction(() => {
      this.#flushInbox()
      this.#store.dispatch({ type: 'run/acknowledged', gen, runId })
      if (id !== undefined) this.#store.dispatch({ type: 'run/events', gen, events: [], lastEventId: id })
    })
  }

  toolsStarted(gen: number): void {
    this.#store.transaction(() => {
      this.#flushInbox()
      this.#store.dispatch({ type: 'run/tools', gen })
    })
  }

  followUp(gen: number, runId: string, messages: readonly Message[]): void {
    this.#store.commit({
      type: 'run/follow-up',
      gen,
      runId,
      messages: Object.freeze(messages.map((m) => deepFreeze(m))),
    })
  }
}

function report(callback: string, fn: () => void): void {
  try {
    fn()
  } catch (error) {
    console.error(`@interlude/react: ${callback} threw`, error)
  }
}
