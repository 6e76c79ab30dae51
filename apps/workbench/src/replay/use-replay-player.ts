import { useEffect, useReducer } from 'react'
import type { RecordingFrame } from '../recording/recording-types.ts'
import type { PlayerAction, PlayerState } from './player-state.ts'
import { delayBeforeNextFrame, initialPlayerState, playerReducer } from './player-state.ts'

/** Drives the pure player with one timer at a time; the timer is the only side effect. */
export function useReplayPlayer(
  frames: readonly RecordingFrame[],
): readonly [PlayerState, (action: PlayerAction) => void] {
  const [state, dispatch] = useReducer(playerReducer, frames.length, (count: number) => initialPlayerState(count))
  const delay = delayBeforeNextFrame(state, frames)
  useEffect(() => {
    if (delay === undefined) return
    const timer = setTimeout(() => dispatch({ type: 'tick' }), delay)
    return () => clearTimeout(timer)
  }, [delay, state.index])
  return [state, dispatch]
}
