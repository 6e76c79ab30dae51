import type { RememberScope } from '@interlude/protocol'
import type { ResolvedTool } from '../../agent/tool.ts'
import type { VerdictContext } from './tool-verdicts.ts'
import { authorizeCall } from './tool-verdicts.ts'

/** A person's answer to an approval (the `tool_call` interrupt's response schema, checked at admission). */
export interface ApprovalPayload {
  readonly approved: boolean
  readonly editedArgs?: unknown
  readonly reason?: string
  /** Approve later matching calls without asking (docs/approvals.md#remembered-permissions). */
  readonly remember?: RememberScope
}

/** What an answered approval makes of a call: run it with these arguments, or settle it without running. */
export type ApprovedCall =
  | { readonly ok: true; readonly tool: ResolvedTool; readonly args: unknown; readonly edited: boolean }
  | { readonly ok: false; readonly status: 'denied' | 'rejected'; readonly result: unknown }

/**
 * The checks between "approved" and the effect, shared by the turn and subagents: a denial, a tool removed since
 * the pause, edited arguments that no longer match the tool's schema (the tool may have changed since admission
 * validated them), and `authorize` again — the resource may have changed while the person decided.
 */
export async function approvedCall(
  call: { readonly toolCallId: string; readonly toolName: string },
  tool: ResolvedTool | undefined,
  payload: ApprovalPayload,
  requestedArgs: () => unknown,
  verdicts: VerdictContext,
): Promise<ApprovedCall> {
  const { toolCallId } = call
  if (!payload.approved)
    return {
      ok: false,
      status: 'denied',
      result: { status: 'denied', reason: payload.reason ?? 'Denied by the user.' },
    }
  if (!tool) return { ok: false, status: 'rejected', result: toolGone(call.toolName) }
  const edited = payload.editedArgs !== undefined
  const args = edited ? payload.editedArgs : requestedArgs()
  const valid = verdicts.validators.validate(tool.parameters, args)
  if (!valid.ok) {
    const result = { status: 'error', error: 'The arguments do not match the tool schema.', issues: valid.issues }
    return { ok: false, status: 'rejected', result }
  }
  const denial = await authorizeCall(tool, args, toolCallId, verdicts)
  if (denial !== undefined) return { ok: false, status: 'denied', result: { status: 'denied', reason: denial } }
  return { ok: true, tool, args, edited }
}

/** The result of a call whose tool was removed between the pause and the answer. */
export function toolGone(toolName: string): { readonly status: 'error'; readonly error: string } {
  return { status: 'error', error: `Tool "${toolName}" is no longer available.` }
}
