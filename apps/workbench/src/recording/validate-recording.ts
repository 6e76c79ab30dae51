import type { FrameKind, Recording } from './recording-types.ts'
import { FRAME_KINDS, RECORDING_VERSION } from './recording-types.ts'

/**
 * Checks an untrusted value (a loaded file) against recording format v1. Every problem is
 * reported with a path; a recording with any problem is refused as a whole (nothing is replayed
 * from a partly valid file). Unknown versions are refused by name so that a newer file is not
 * misread.
 */

export type RecordingCheck =
  { readonly ok: true; readonly recording: Recording } | { readonly ok: false; readonly problems: readonly string[] }

const MAX_PROBLEMS = 20

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1))
  if (isRecord(value)) return Object.values(value).every((item) => isJson(item, depth + 1))
  return false
}

const KNOWN_KINDS = new Set<string>(FRAME_KINDS)
const PURPOSES = new Set(['run', 'resume', 'events', 'follow', 'thread', 'inbox', 'cancel', 'decisions', 'other'])
const END_OUTCOMES = new Set(['complete', 'http-error', 'network-error', 'aborted', 'stream-error'])

export function checkRecording(value: unknown): RecordingCheck {
  const problems: string[] = []
  const problem = (path: string, text: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(path === '' ? text : `${path}: ${text}`)
  }

  if (!isRecord(value)) return { ok: false, problems: ['recording must be a JSON object'] }
  if (value.version !== RECORDING_VERSION) {
    return {
      ok: false,
      problems: [
        `unsupported recording version ${JSON.stringify(value.version) ?? 'undefined'} (this workbench reads version ${RECORDING_VERSION})`,
      ],
    }
  }
  if (typeof value.createdAt !== 'string' || Number.isNaN(Date.parse(value.createdAt)))
    problem('createdAt', 'must be an ISO-8601 time')
  if (!isRecord(value.meta)) problem('meta', 'must be an object')
  else {
    if (typeof value.meta.title !== 'string') problem('meta.title', 'must be a string')
    if (typeof value.meta.app !== 'string') problem('meta.app', 'must be a string')
    for (const key of ['origin', 'userAgent', 'notes'] as const) {
      if (value.meta[key] !== undefined && typeof value.meta[key] !== 'string')
        problem(`meta.${key}`, 'must be a string')
    }
  }
  if (!Array.isArray(value.frames)) {
    problem('frames', 'must be an array')
    return { ok: false, problems }
  }

  let lastSeq = -Infinity
  let lastT = -Infinity
  value.frames.forEach((frame: unknown, index) => {
    const at = `frames[${index}]`
    if (!isRecord(frame)) return problem(at, 'must be an object')
    if (typeof frame.kind !== 'string' || !KNOWN_KINDS.has(frame.kind))
      return problem(`${at}.kind`, `unknown frame kind ${JSON.stringify(frame.kind)}`)
    if (typeof frame.seq !== 'number' || !Number.isInteger(frame.seq) || frame.seq <= lastSeq)
      problem(`${at}.seq`, 'must be an integer greater than the previous frame')
    else lastSeq = frame.seq
    if (typeof frame.t !== 'number' || !Number.isFinite(frame.t) || frame.t < 0 || frame.t < lastT)
      problem(`${at}.t`, 'must be a number ≥ 0 and ≥ the previous frame')
    else lastT = frame.t
    checkFrame(frame.kind as FrameKind, frame, at, problem)
  })

  return problems.length === 0 ? { ok: true, recording: value as unknown as Recording } : { ok: false, problems }
}

function checkFrame(
  kind: FrameKind,
  frame: Record<string, unknown>,
  at: string,
  problem: (path: string, text: string) => void,
): void {
  const str = (key: string, optional = false) => {
    const v = frame[key]
    if (optional && v === undefined) return
    if (typeof v !== 'string') problem(`${at}.${key}`, 'must be a string')
  }
  const json = (key: string, optional = false) => {
    const v = frame[key]
    if (optional && v === undefined) return
    if (v === undefined || !isJson(v)) problem(`${at}.${key}`, 'must be JSON')
  }
  const error = (key: string) => {
    const v = frame[key]
    if (v === undefined) return
    if (
      !isRecord(v) ||
      typeof v.code !== 'string' ||
      typeof v.message !== 'string' ||
      (v.details !== undefined && !isJson(v.details))
    ) {
      problem(`${at}.${key}`, 'must be { code, message, details? }')
    }
  }
  switch (kind) {
    case 'sse-event':
      str('requestId')
      if (frame.sseId !== null && typeof frame.sseId !== 'string') problem(`${at}.sseId`, 'must be a string or null')
      json('event')
      return
    case 'snapshot':
      checkSnapshot(frame.snapshot, `${at}.snapshot`, problem)
      return
    case 'form':
      str('batchId')
      if (frame.phase !== 'draft' && frame.phase !== 'submit') problem(`${at}.phase`, 'must be "draft" or "submit"')
      if (!isRecord(frame.choices) || !isJson(frame.choices)) problem(`${at}.choices`, 'must be a JSON object')
      if (frame.entries !== undefined && (!Array.isArray(frame.entries) || !isJson(frame.entries)))
        problem(`${at}.entries`, 'must be a JSON array')
      return
    case 'request-start':
      str('requestId')
      str('method')
      str('path')
      if (typeof frame.purpose !== 'string' || !PURPOSES.has(frame.purpose))
        problem(`${at}.purpose`, 'is not a known purpose')
      json('input', true)
      return
    case 'request-response':
      str('requestId')
      if (typeof frame.status !== 'number' || !Number.isInteger(frame.status))
        problem(`${at}.status`, 'must be an integer')
      if (typeof frame.ok !== 'boolean') problem(`${at}.ok`, 'must be a boolean')
      if (frame.contentType !== null && typeof frame.contentType !== 'string')
        problem(`${at}.contentType`, 'must be a string or null')
      error('error')
      return
    case 'request-end':
      str('requestId')
      if (typeof frame.outcome !== 'string' || !END_OUTCOMES.has(frame.outcome))
        problem(`${at}.outcome`, 'is not a known outcome')
      if (typeof frame.eventCount !== 'number' || !Number.isInteger(frame.eventCount) || frame.eventCount < 0)
        problem(`${at}.eventCount`, 'must be an integer ≥ 0')
      error('error')
      return
    case 'action':
      str('name')
      json('detail', true)
      error('error')
      return
  }
}

function checkSnapshot(value: unknown, at: string, problem: (path: string, text: string) => void): void {
  if (!isRecord(value)) return problem(at, 'must be an object')
  for (const key of ['threadId', 'status', 'connection'] as const) {
    if (typeof value[key] !== 'string') problem(`${at}.${key}`, 'must be a string')
  }
  for (const key of ['isLoading', 'isResuming'] as const) {
    if (typeof value[key] !== 'boolean') problem(`${at}.${key}`, 'must be a boolean')
  }
  if (value.runId !== null && typeof value.runId !== 'string') problem(`${at}.runId`, 'must be a string or null')
  for (const key of ['messages', 'unsettledEffects'] as const) {
    if (!Array.isArray(value[key]) || !isJson(value[key])) problem(`${at}.${key}`, 'must be a JSON array')
  }
  if (value.decisions !== undefined && (!Array.isArray(value.decisions) || !isJson(value.decisions)))
    problem(`${at}.decisions`, 'must be a JSON array')
  if (!isJson(value.state ?? null)) problem(`${at}.state`, 'must be JSON')
  const batch = value.pendingInterrupts
  if (batch !== null) {
    if (
      !isRecord(batch) ||
      typeof batch.id !== 'string' ||
      !Array.isArray(batch.interrupts) ||
      !isJson(batch.interrupts)
    ) {
      problem(`${at}.pendingInterrupts`, 'must be null or { id, interrupts[] }')
    }
  }
  const error = value.error
  if (error !== null && (!isRecord(error) || typeof error.code !== 'string' || typeof error.message !== 'string')) {
    problem(`${at}.error`, 'must be null or { code, message }')
  }
  const recovery = value.recovery
  if (!isRecord(recovery) || typeof recovery.revision !== 'number' || typeof recovery.required !== 'boolean') {
    problem(`${at}.recovery`, 'must be { revision, required }')
  }
}

/** Parses recording text (e.g. a loaded file). Never throws: bad JSON is a problem too. */
export function parseRecording(text: string): RecordingCheck {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, problems: ['file is not JSON'] }
  }
  return checkRecording(value)
}
