import type { Interrupt, ResumeEntry } from '@interlude/protocol'

/**
 * Interrupts of foreign AG-UI bridges, presented and answered in Interlude's terms
 * (docs/decisions.md#foreign-servers). On receipt a foreign interrupt without a question or an
 * answer schema gets both: its question as `message` (what forms use as the title), what it is
 * about as `metadata.arguments`, and the approval schema `{ approved, reason?, editedArgs? }`.
 * On sending, an approval-shaped answer becomes what the server takes, chosen by the
 * interrupt's shape:
 *
 * - a LangGraph `interrupt()` value: `{ approved, reason? }` as it is; a cancel becomes a denial
 *   (the bridge would hand the node its own cancellation marker, which graphs do not expect);
 * - LangChain's `humanInTheLoopMiddleware` (`actionRequests`): `{ decisions: [{ type: "approve" |
 *   "edit" | "reject" }] }`, one per action; a cancel becomes `reject` (the middleware fails the run on
 *   anything else);
 * - a Mastra suspension: the payload as it is; a cancel becomes `{ approved: false }` when the tool's
 *   resume schema is an approval, else it stays a cancel (the bridge then ends the run and the tool
 *   stays suspended).
 *
 * An answer already in the server's own shape (for example `{ decisions }`) is sent unchanged.
 */

type Rec = Record<string, unknown>
export type ForeignKind = 'langgraph' | 'langchain-hitl' | 'mastra'

const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined)

const CANCELLED_REASON = 'Cancelled by the user.'

interface ActionRequest {
  readonly name: string
  readonly args: unknown
  readonly description: string | undefined
}

function langGraphRaw(interrupt: Interrupt): { found: boolean; raw: unknown } {
  const lg = (interrupt.metadata as Rec | undefined)?.langgraph
  return isRecord(lg) && 'raw' in lg ? { found: true, raw: lg.raw } : { found: false, raw: undefined }
}

function mastraMeta(interrupt: Interrupt): Rec | undefined {
  const m = (interrupt.metadata as Rec | undefined)?.mastra
  return isRecord(m) && m.type === 'mastra_suspend' ? m : undefined
}

/** LangChain's HITL request (`actionRequests`, or Python's `action_requests`). */
function actionRequestsOf(raw: unknown): ActionRequest[] | undefined {
  if (!isRecord(raw)) return undefined
  const list = raw.actionRequests ?? raw.action_requests
  if (!Array.isArray(list) || list.length === 0) return undefined
  const actions = list.filter((a): a is Rec => isRecord(a) && typeof a.name === 'string')
  if (actions.length !== list.length) return undefined
  return actions.map((a) => ({ name: a.name as string, args: a.args, description: str(a.description) }))
}

/** Which bridge's interrupt this is, by its shape; `undefined` for everything else. */
export function foreignKind(interrupt: Interrupt): ForeignKind | undefined {
  const lg = langGraphRaw(interrupt)
  if (lg.found) return actionRequestsOf(lg.raw) ? 'langchain-hitl' : 'langgraph'
  return mastraMeta(interrupt) ? 'mastra' : undefined
}

function allowsEdit(raw: unknown): boolean {
  if (!isRecord(raw)) return false
  const configs = raw.reviewConfigs ?? raw.review_configs
  if (!Array.isArray(configs)) return false
  return configs.some((c) => {
    const allowed = isRecord(c) ? (c.allowedDecisions ?? c.allowed_decisions) : undefined
    return Array.isArray(allowed) && allowed.includes('edit')
  })
}

function approvalSchema(edit: boolean): Rec {
  return {
    type: 'object',
    properties: {
      approved: { type: 'boolean', title: 'Approve' },
      reason: { type: 'string', title: 'Reason' },
      ...(edit ? { editedArgs: { type: 'object', title: 'Arguments' } } : {}),
    },
    required: ['approved'],
  }
}

const firstLine = (text: string): string => text.split('\n')[0]!.trim()

/** The question a LangGraph value or a Mastra suspend payload asks. */
function questionOf(value: unknown): string | undefined {
  if (typeof value === 'string') return str(value)
  if (!isRecord(value)) return undefined
  return str(value.question) ?? str(value.message) ?? str(value.prompt) ?? str(value.title)
}

const QUESTION_KEYS = new Set(['question', 'message', 'prompt', 'title', 'reason', 'responseSchema', 'response_schema'])

/** What a LangGraph value is about: its fields other than the question. */
function detailsOf(value: unknown): Rec | undefined {
  if (!isRecord(value)) return undefined
  const rest = Object.fromEntries(Object.entries(value).filter(([k]) => !QUESTION_KEYS.has(k)))
  return Object.keys(rest).length > 0 ? rest : undefined
}

function withPresentation(interrupt: Interrupt, message: string | undefined, args: unknown, schema: Rec | undefined) {
  const metadata = { ...(interrupt.metadata as Rec | undefined) }
  if (args !== undefined && metadata.arguments === undefined) metadata.arguments = args
  return {
    ...interrupt,
    ...(interrupt.message === undefined && message !== undefined ? { message } : {}),
    ...(interrupt.responseSchema === undefined && schema !== undefined ? { responseSchema: schema } : {}),
    metadata,
  } as Interrupt
}

/** The interrupt as forms show it: question as title, its arguments, an answer schema. Others unchanged. */
export function presentForeignInterrupt(interrupt: Interrupt): Interrupt {
  const kind = foreignKind(interrupt)
  if (kind === undefined) return interrupt
  if (kind === 'mastra') {
    const meta = mastraMeta(interrupt)!
    return withPresentation(interrupt, questionOf(meta.suspendPayload), meta.args, undefined)
  }
  const { raw } = langGraphRaw(interrupt)
  if (kind === 'langchain-hitl') {
    const actions = actionRequestsOf(raw)!
    const title = actions.map((a) => (a.description ? firstLine(a.description) : `Run ${a.name}?`)).join('; ')
    const args = actions.length === 1 ? actions[0]!.args : Object.fromEntries(actions.map((a) => [a.name, a.args]))
    return withPresentation(interrupt, title, args, approvalSchema(actions.length === 1 && allowsEdit(raw)))
  }
  return withPresentation(interrupt, questionOf(raw), detailsOf(raw), approvalSchema(false))
}

function decisionsFor(actions: readonly ActionRequest[], payload: unknown, cancelled: boolean): unknown {
  const answer = isRecord(payload) ? payload : {}
  if (!cancelled && Array.isArray(answer.decisions)) return payload // already the middleware's shape
  if (!cancelled && answer.approved !== true && answer.approved !== false) return payload
  const decision = (action: ActionRequest): Rec => {
    if (cancelled) return { type: 'reject', message: CANCELLED_REASON }
    if (answer.approved === false) return { type: 'reject', ...(str(answer.reason) ? { message: answer.reason } : {}) }
    if (isRecord(answer.editedArgs))
      return { type: 'edit', editedAction: { name: action.name, args: answer.editedArgs } }
    return { type: 'approve' }
  }
  return { decisions: actions.map(decision) }
}

const isApprovalSchema = (schema: unknown): boolean => {
  const parsed = typeof schema === 'string' ? safeParse(schema) : schema
  return isRecord(parsed) && isRecord(parsed.properties) && isRecord(parsed.properties.approved)
    ? parsed.properties.approved.type === 'boolean'
    : false
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** One resume entry in the shape the interrupt's server takes (see the module comment). */
export function adaptResumeEntry(interrupt: Interrupt | undefined, entry: ResumeEntry): ResumeEntry {
  if (interrupt === undefined) return entry
  const kind = foreignKind(interrupt)
  const cancelled = entry.status === 'cancelled'
  const resolved = (payload: unknown): ResumeEntry => ({ interruptId: entry.interruptId, status: 'resolved', payload })
  switch (kind) {
    case 'langchain-hitl':
      return resolved(decisionsFor(actionRequestsOf(langGraphRaw(interrupt).raw)!, entry.payload, cancelled))
    case 'langgraph': {
      const raw = langGraphRaw(interrupt).raw
      const ownSchema = isRecord(raw) && (raw.responseSchema ?? raw.response_schema) !== undefined
      return cancelled && !ownSchema ? resolved({ approved: false, reason: CANCELLED_REASON }) : entry
    }
    case 'mastra':
      return cancelled && isApprovalSchema(mastraMeta(interrupt)!.resumeSchema) ? resolved({ approved: false }) : entry
    default:
      return entry
  }
}
