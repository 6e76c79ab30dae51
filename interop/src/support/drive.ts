import type { Interrupt, ResumeEntry } from '@interlude/protocol'
import { ChatRuntime, interruptTitle } from '@interlude/react'
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'

/**
 * Drives a real foreign server with `@interlude/react`'s `ChatRuntime` over real HTTP: a message that pauses, then
 * the standard `resume[]`. Every request body is kept, so a test can check what went over the wire.
 */
export interface Drive {
  readonly rt: ChatRuntime
  readonly threadId: string
  /** Bodies of the POSTs the runtime sent, in order. */
  readonly bodies: Record<string, unknown>[]
}

export function drive(runUrl: string): Drive {
  const bodies: Record<string, unknown>[] = []
  const recording: typeof fetch = async (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string')
      bodies.push(JSON.parse(init.body) as Record<string, unknown>)
    return fetch(input, init)
  }
  // LangGraph's API server takes only UUID thread ids.
  const threadId = randomUUID()
  const rt = new ChatRuntime({ runUrl, mode: 'plain', fetch: recording, threadId, follow: false, throttleMs: 0 })
  return { rt, threadId, bodies }
}

/** Sends the message and returns the one pending interrupt with its title, after checking the pause is clean. */
export async function pauseOn(
  d: Drive,
  text: string,
): Promise<{ interrupt: Interrupt; title: string; batchId: string }> {
  await d.rt.sendMessage(text)
  const snapshot = d.rt.getSnapshot()
  expect(snapshot.error).toBeUndefined()
  expect(snapshot.isLoading).toBe(false)
  const batch = snapshot.pendingInterrupts
  expect(batch?.interrupts).toHaveLength(1)
  const interrupt = batch!.interrupts[0]!
  return { interrupt, title: interruptTitle(interrupt, snapshot.messages), batchId: batch!.id }
}

/** Answers the pause and checks the run finished cleanly; returns the `resume[]` the server received. */
export async function resumeWith(
  d: Drive,
  batchId: string,
  entry: Omit<ResumeEntry, 'interruptId'> & { interruptId: string },
): Promise<unknown> {
  await d.rt.resume({ batchId, entries: [entry] })
  const done = d.rt.getSnapshot()
  expect(done.error).toBeUndefined()
  expect(done.pendingInterrupts).toBeUndefined()
  expect(done.isLoading).toBe(false)
  const body = d.bodies.at(-1)!
  expect((body.forwardedProps as { command?: unknown } | undefined)?.command).toBeUndefined()
  return body.resume
}

/** The text of the last assistant message the runtime shows. */
export function lastAssistantText(d: Drive): string {
  const last = [...d.rt.getSnapshot().messages]
    .reverse()
    .find((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '')
  return typeof last?.content === 'string' ? last.content : ''
}
