import { afterEach, expect } from 'vitest'
import type { ForkCreated, ForkRequest, Interrupt, ThreadSnapshot } from '@interlude/protocol'
import type { AgentDefinition } from '../agent/agent.ts'
import { createFleet } from '../demo/fleet.ts'
import type { Fleet } from '../demo/fleet.ts'
import { releaseAssistant, releaseAssistantScript } from '../demo/release-assistant.ts'
import type { ReleaseState } from '../demo/release-assistant.ts'
import { scriptedModel } from '../models/scripted.ts'
import type { ModelRequest } from '../models/model.ts'
import type { JsonAnswer } from './decisions.ts'
import { readJson } from './decisions.ts'
import { interruptsOf, newThreadId, resumeInput, runInput, userMessage } from './harness.ts'
import type { InProcessServer, RequestOptions } from './in-process.ts'
import type { StartOn } from './store-backends.ts'
import { recordingModel } from './recording-model.ts'
import { resolved } from './resume-entries.ts'

/** The demo agent on its own fleet that counts deployments, and a model that counts its calls (docs/time-travel.md tests). */
export function countingDemo(): {
  agent: AgentDefinition
  deployments: { environment: string; version: string }[]
  modelCalls: ModelRequest[]
} {
  const fleet = createFleet()
  const deployments: { environment: string; version: string }[] = []
  const counting: Fleet = {
    running: (environment) => fleet.running(environment),
    deploy: (environment, version) => {
      deployments.push({ environment, version })
      fleet.deploy(environment, version)
    },
  }
  const model = recordingModel(scriptedModel(releaseAssistantScript))
  const agent = releaseAssistant({ model, fleet: counting }) as AgentDefinition
  return { agent, deployments, modelCalls: model.requests }
}

/** `POST {base}/threads/:threadId/fork` as JSON. */
export async function postFork(
  s: InProcessServer,
  threadId: string,
  body: ForkRequest | Record<string, unknown>,
  options: RequestOptions = {},
): Promise<JsonAnswer<ForkCreated>> {
  return readJson<ForkCreated>(
    await s.request(`/threads/${threadId}/fork`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      ...options,
    }),
  )
}

/** The snapshot as a parsed body and as the exact bytes served. */
export async function snapshotOf(s: InProcessServer, threadId: string): Promise<{ body: ThreadSnapshot; raw: string }> {
  const response = await s.request(`/threads/${threadId}`)
  expect(response.status).toBe(200)
  const raw = await response.text()
  return { body: JSON.parse(raw) as ThreadSnapshot, raw }
}

/** The parent's snapshot and log, byte for byte: compare before/after a fork. */
export async function parentBytes(s: InProcessServer, threadId: string): Promise<{ snapshot: string; log: string }> {
  const [snapshot, log] = await Promise.all([snapshotOf(s, threadId), s.threadEvents(threadId)])
  return { snapshot: snapshot.raw, log: log.raw }
}

export const stateOf = (snapshot: ThreadSnapshot) => snapshot.state as ReleaseState

/**
 * "please deploy v2.1 to production", both approved: the parent's one deployment. Answers the thread, the first run
 * (the batch's id) and the interrupts it paused with.
 */
export async function deployedThread(
  s: InProcessServer,
  text = 'please deploy v2.1 to production',
): Promise<{ threadId: string; batchId: string; interrupts: Interrupt[]; userMessageId: string }> {
  const threadId = newThreadId()
  const user = userMessage(text)
  const first = await s.postRun(runInput(threadId, [user]))
  expect(first.status).toBe(200)
  const interrupts = interruptsOf(first.events)
  expect(interrupts).toHaveLength(2)
  const batchId = (first.events[0] as { runId: string }).runId
  const resumed = await s.postRun(
    resumeInput(
      threadId,
      interrupts.map((i) => resolved(i)),
    ),
  )
  expect(resumed.status).toBe(200)
  return { threadId, batchId, interrupts, userMessageId: user.id }
}

/** Inside a `describe`: starts servers on one store with `agent` (default: a counting demo); each is disposed after its test. */
export function serverPerTest(start: StartOn): (agent?: AgentDefinition) => Promise<InProcessServer> {
  const started: InProcessServer[] = []
  afterEach(async () => {
    for (const s of started.splice(0)) await s.dispose()
  })
  return async (agent = countingDemo().agent) => {
    const s = await start({ agent })
    started.push(s)
    return s
  }
}
