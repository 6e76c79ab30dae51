import { describe, expect, it } from 'vitest'
import type { RecordingFrame } from '../recording/recording-types.ts'
import { delayBeforeNextFrame, initialPlayerState, playerReducer } from './player-state.ts'

const frames: RecordingFrame[] = [0, 10, 10, 5000, 5020].map((t, seq) => ({ seq, t, kind: 'action', name: `a${seq}` }))

describe('playerReducer', () => {
  it('plays to the end one tick at a time and stops there', () => {
    let state = playerReducer(initialPlayerState(3), { type: 'play' })
    expect(state).toMatchObject({ index: 0, playing: true })
    state = playerReducer(state, { type: 'tick' })
    expect(state).toMatchObject({ index: 1, playing: true })
    state = playerReducer(state, { type: 'tick' })
    expect(state).toMatchObject({ index: 2, playing: false })
    expect(playerReducer(state, { type: 'tick' })).toBe(state)
  })

  it('starts over when played from the last frame', () => {
    const state = playerReducer(initialPlayerState(3, { index: 2 }), { type: 'play' })
    expect(state).toMatchObject({ index: 0, playing: true })
  })

  it('steps and seeks within bounds and pauses while doing so', () => {
    const playing = initialPlayerState(3, { index: 1, playing: true })
    expect(playerReducer(playing, { type: 'step', by: 1 })).toMatchObject({ index: 2, playing: false })
    expect(playerReducer(playing, { type: 'step', by: -5 })).toMatchObject({ index: 0, playing: false })
    expect(playerReducer(playing, { type: 'seek', index: 99 })).toMatchObject({ index: 2, playing: false })
    const paused = initialPlayerState(3)
    expect(playerReducer(paused, { type: 'step', by: -1 })).toBe(paused)
  })

  it('does nothing for an empty recording', () => {
    const empty = initialPlayerState(0)
    expect(playerReducer(empty, { type: 'play' })).toBe(empty)
    expect(playerReducer(empty, { type: 'step', by: 1 })).toBe(empty)
  })

  it('keeps identity for no-op settings and rejects invalid ones', () => {
    const state = initialPlayerState(3)
    expect(playerReducer(state, { type: 'set-speed', speed: 1 })).toBe(state)
    expect(playerReducer(state, { type: 'set-speed', speed: 0 })).toBe(state)
    expect(playerReducer(state, { type: 'set-speed', speed: 4 }).speed).toBe(4)
    expect(playerReducer(state, { type: 'set-pacing', pacing: 'fixed' }).pacing).toBe('fixed')
    expect(playerReducer(state, { type: 'set-fixed-ms', fixedMs: -1 })).toBe(state)
  })
})

describe('delayBeforeNextFrame', () => {
  it('uses the recorded gap divided by speed, capping long pauses', () => {
    const state = initialPlayerState(frames.length, { playing: true, speed: 2, maxGapMs: 1500 })
    expect(delayBeforeNextFrame(state, frames)).toBe(5)
    expect(delayBeforeNextFrame({ ...state, index: 1 }, frames)).toBe(0)
    expect(delayBeforeNextFrame({ ...state, index: 2 }, frames)).toBe(750)
  })

  it('uses the fixed gap with fixed pacing', () => {
    const state = initialPlayerState(frames.length, { playing: true, pacing: 'fixed', fixedMs: 100, speed: 0.5 })
    expect(delayBeforeNextFrame(state, frames)).toBe(200)
  })

  it('schedules nothing when paused or at the last frame', () => {
    expect(delayBeforeNextFrame(initialPlayerState(frames.length), frames)).toBeUndefined()
    expect(delayBeforeNextFrame(initialPlayerState(frames.length, { playing: true, index: 4 }), frames)).toBeUndefined()
  })
})
