import type { RecordingFrame } from '../recording/recording-types.ts'

/**
 * The replay player as a pure reducer: which frame is selected, whether it is playing, at what
 * speed and with which pacing. Timers live in the hook that drives it (`use-replay-player.ts`);
 * everything here is deterministic and tested without time.
 */

/** `recorded`: the recorded gaps between frames (long pauses capped); `fixed`: the same gap for every frame. */
export type Pacing = 'recorded' | 'fixed'

export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8] as const

export interface PlayerState {
  readonly frameCount: number
  /** The selected frame (0 when the recording is empty). */
  readonly index: number
  readonly playing: boolean
  readonly speed: number
  readonly pacing: Pacing
  /** Gap per frame with `fixed` pacing, in ms at speed 1. */
  readonly fixedMs: number
  /** Longest gap with `recorded` pacing, in ms at speed 1 (a person's think time is not replayed in full). */
  readonly maxGapMs: number
}

export type PlayerAction =
  | { readonly type: 'play' }
  | { readonly type: 'pause' }
  | { readonly type: 'step'; readonly by: number }
  | { readonly type: 'seek'; readonly index: number }
  | { readonly type: 'tick' }
  | { readonly type: 'set-speed'; readonly speed: number }
  | { readonly type: 'set-pacing'; readonly pacing: Pacing }
  | { readonly type: 'set-fixed-ms'; readonly fixedMs: number }

export function initialPlayerState(
  frameCount: number,
  overrides: Partial<Omit<PlayerState, 'frameCount'>> = {},
): PlayerState {
  return {
    frameCount,
    index: 0,
    playing: false,
    speed: 1,
    pacing: 'recorded',
    fixedMs: 120,
    maxGapMs: 1500,
    ...overrides,
  }
}

function clampIndex(state: PlayerState, index: number): number {
  if (state.frameCount === 0) return 0
  return Math.min(state.frameCount - 1, Math.max(0, Math.trunc(index)))
}

export function playerReducer(state: PlayerState, action: PlayerAction): PlayerState {
  const last = Math.max(0, state.frameCount - 1)
  switch (action.type) {
    case 'play':
      if (state.frameCount === 0 || state.playing) return state
      // Playing from the last frame starts over.
      return { ...state, playing: true, index: state.index >= last ? 0 : state.index }
    case 'pause':
      return state.playing ? { ...state, playing: false } : state
    case 'step': {
      const index = clampIndex(state, state.index + action.by)
      return index === state.index && !state.playing ? state : { ...state, index, playing: false }
    }
    case 'seek': {
      const index = clampIndex(state, action.index)
      return index === state.index && !state.playing ? state : { ...state, index, playing: false }
    }
    case 'tick': {
      if (!state.playing) return state
      const index = clampIndex(state, state.index + 1)
      return { ...state, index, playing: index < last }
    }
    case 'set-speed':
      return Number.isFinite(action.speed) && action.speed > 0 && action.speed !== state.speed
        ? { ...state, speed: action.speed }
        : state
    case 'set-pacing':
      return action.pacing === state.pacing ? state : { ...state, pacing: action.pacing }
    case 'set-fixed-ms':
      return Number.isFinite(action.fixedMs) && action.fixedMs >= 0 && action.fixedMs !== state.fixedMs
        ? { ...state, fixedMs: action.fixedMs }
        : state
  }
}

/** Milliseconds to wait before the next `tick`, or `undefined` when nothing should be scheduled. */
export function delayBeforeNextFrame(state: PlayerState, frames: readonly RecordingFrame[]): number | undefined {
  if (!state.playing) return undefined
  const current = frames[state.index]
  const next = frames[state.index + 1]
  if (current === undefined || next === undefined) return undefined
  const gap = state.pacing === 'fixed' ? state.fixedMs : Math.min(Math.max(0, next.t - current.t), state.maxGapMs)
  return gap / state.speed
}
