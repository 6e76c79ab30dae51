/**
 * The server's one clock. Everything time-dependent (interrupt expiry, run leases, recovery,
 * store timestamps) reads the same injected `Clock`, so a test that moves time moves all of it.
 */
export type Clock = () => number

/** Wall-clock milliseconds since the epoch. */
export const systemClock: Clock = () => Date.now()
