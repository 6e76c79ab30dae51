import type { Interrupt } from '@interlude/protocol'

/**
 * The legacy pause of foreign AG-UI bridges: `CUSTOM { name: "on_interrupt" }` events followed by a
 * `RUN_FINISHED` without `outcome` (docs/decisions.md#foreign-servers). `@ag-ui/langgraph` sends one
 * per LangGraph interrupt (its `rawEvent` is the interrupt, `{ id, value, ns?, … }`); `@ag-ui/mastra`
 * sends one per suspended tool (`value` is JSON `{ type: "mastra_suspend", toolCallId, … }`). Both
 * bridges take the standard `resume[]` with the ids built here, so reading them is enough.
 *
 * Anything else named `on_interrupt`, and every other `CUSTOM`, is not a pause: an app's own
 * custom events must never stop a conversation.
 */

// Also in ./foreign-support.ts, which must not import this module (it is loaded on first need).
const LEGACY_INTERRUPT_EVENT = 'on_interrupt'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A schema object, or one sent as JSON text (Mastra serialises `resumeSchema`). */
function schemaOf(value: unknown): Record<string, unknown> | undefined {
  const parsed = parseJson(value)
  return isRecord(parsed) ? parsed : undefined
}

/** `@ag-ui/langgraph`: the same mapping its `interruptsToAGUI` applies for the `outcome` form. */
function langGraphInterrupt(raw: Record<string, unknown>, id: string): Interrupt {
  const value = raw.value
  const obj = isRecord(value) ? value : undefined
  const message = typeof value === 'string' ? value : str(obj?.message)
  const toolCallId = str(obj?.toolCallId) ?? str(obj?.tool_call_id)
  const responseSchema = schemaOf(obj?.responseSchema ?? obj?.response_schema)
  const expiresAt = str(obj?.expiresAt) ?? str(obj?.expires_at)
  return {
    id,
    reason: str(obj?.reason) ?? 'langgraph:interrupt',
    ...(message === undefined ? {} : { message }),
    ...(toolCallId === undefined ? {} : { toolCallId }),
    ...(responseSchema === undefined ? {} : { responseSchema }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    metadata: { langgraph: { raw: value, ns: raw.ns, resumable: raw.resumable, when: raw.when } },
  } as Interrupt
}

/** `@ag-ui/mastra`: the id is `<runId>::<toolCallId>`, which its resume path splits again. */
function mastraInterrupt(value: Record<string, unknown>, toolCallId: string, runId: string): Interrupt {
  const mastraRunId = str(value.runId) ?? runId
  const responseSchema = schemaOf(value.resumeSchema)
  return {
    id: `${mastraRunId}::${toolCallId}`,
    reason: 'mastra:tool_suspend',
    toolCallId,
    ...(responseSchema === undefined ? {} : { responseSchema }),
    metadata: {
      mastra: {
        type: 'mastra_suspend',
        toolName: value.toolName,
        suspendPayload: value.suspendPayload,
        args: value.args,
        resumeSchema: value.resumeSchema,
        runId: mastraRunId,
      },
    },
  } as Interrupt
}

/**
 * The interrupt a `CUSTOM` event announces, or `undefined` when it is not a legacy pause.
 * `runId` is the request's run id (Mastra's default when the event names none); `index` numbers
 * the pauses of one run (a LangGraph event that lost its `rawEvent` gets `on_interrupt:<index>`,
 * which the bridge still resolves when it is the only one: it answers a lone interrupt by position).
 */
export function legacyInterrupt(
  event: { readonly name?: unknown; readonly value?: unknown; readonly rawEvent?: unknown },
  runId: string,
  index: number,
): Interrupt | undefined {
  if (event.name !== LEGACY_INTERRUPT_EVENT) return undefined
  const value = parseJson(event.value)
  if (isRecord(value) && value.type === 'mastra_suspend') {
    const toolCallId = str(value.toolCallId)
    return toolCallId === undefined ? undefined : mastraInterrupt(value, toolCallId, runId)
  }
  const raw = event.rawEvent
  if (isRecord(raw) && 'value' in raw) {
    const id = str(raw.id)
    if (id !== undefined) return langGraphInterrupt(raw, id)
  }
  // A LangGraph pause whose raw interrupt was stripped on the way (a proxy that drops `rawEvent`).
  if (typeof event.value === 'string' && raw === undefined && value !== undefined)
    return langGraphInterrupt({ value }, `${LEGACY_INTERRUPT_EVENT}:${index}`)
  return undefined
}
