/**
 * Test helper (imported by tests only): real release turns on a real server, made the way the workbench would make
 * them, through `POST /runs` with the scripted release assistant.
 */
import { interruptsOf, postRun, resumeInput, runInput, userMessage } from '@interlude/agent-server/testing'
import type { RunResponse, TestServer } from '@interlude/agent-server/testing'

export interface ReleaseTurn {
  /** The run that paused with the batch: the server's `batchId`. */
  readonly pausedRunId: string
  /** The ids of the batch's interrupts. */
  readonly interruptIds: readonly string[]
  /** The answer run's response (its last SSE id is the log's length so far). */
  readonly answered: RunResponse
}

/** `text` ("deploy v2.1 to production") pauses with a batch; every interrupt is then answered `approved`. */
export async function releaseTurn(
  server: TestServer,
  threadId: string,
  text: string,
  approved: boolean,
  principal: 'alice' | 'bob' = 'alice',
): Promise<ReleaseTurn> {
  const paused = await postRun(server, runInput(threadId, [userMessage(text)]), { principal })
  const interrupts = interruptsOf(paused.events)
  const answers = interrupts.map((i) => ({
    interruptId: i.id,
    status: 'resolved' as const,
    payload: { approved },
  }))
  const answered = await postRun(server, resumeInput(threadId, answers), { principal })
  const pausedRunId = (paused.events[0] as { runId: string }).runId
  return { pausedRunId, interruptIds: interrupts.map((i) => i.id), answered }
}
