/** The abort signal of one transport attempt, with a countdown that `alive()` restarts. */
export interface IdleWatchdog {
  readonly signal: AbortSignal
  /** Bytes arrived (an event batch or a comment): restart the countdown. */
  readonly alive: () => void
  readonly fired: () => boolean
  readonly dispose: () => void
}

/**
 * An AbortSignal that follows `parent` and also aborts after `timeoutMs` without `alive()`: a
 * connection that dies silently (no FIN/RST) is noticed (0 or Infinity: never).
 */
export function idleWatchdog(parent: AbortSignal, timeoutMs: number): IdleWatchdog {
  const controller = new AbortController()
  const follow = () => controller.abort(parent.reason)
  if (parent.aborted) follow()
  else parent.addEventListener('abort', follow, { once: true })
  const enabled = timeoutMs > 0 && Number.isFinite(timeoutMs)
  let timer: ReturnType<typeof setTimeout> | undefined
  let fired = false
  let disposed = false
  const alive = () => {
    if (!enabled || disposed || fired) return
    if (timer !== undefined) clearTimeout(timer)
    timer = setTimeout(() => {
      fired = true
      // The reason is never shown: the driver reports the silence as its own `idle_timeout` error.
      controller.abort()
    }, timeoutMs)
  }
  alive()
  return {
    signal: controller.signal,
    alive,
    fired: () => fired,
    dispose: () => {
      disposed = true
      if (timer !== undefined) clearTimeout(timer)
      parent.removeEventListener('abort', follow)
    },
  }
}
