import type { Interrupt } from '@interlude/protocol'
import { describe, expect, it } from 'vitest'
import { hitlRequest } from '../test-utils/recorded-streams.ts'
import { adaptResumeEntry, foreignKind, presentForeignInterrupt } from './foreign-answers.ts'
import { legacyInterrupt } from './foreign-interrupts.ts'

const lg = (raw: unknown): Interrupt => ({ id: 'i1', reason: 'langgraph:interrupt', metadata: { langgraph: { raw } } })

describe('foreign interrupts: presentation', () => {
  it('leaves Interlude and unknown interrupts untouched', () => {
    const own: Interrupt = { id: 'i1', reason: 'tool_call', toolCallId: 'c1' }
    expect(presentForeignInterrupt(own)).toBe(own)
    expect(foreignKind({ id: 'x', reason: 'input_required', metadata: { langgraph: 'no' } })).toBeUndefined()
  })

  it('a LangGraph value: its question is the title and its other fields the arguments', () => {
    const shown = presentForeignInterrupt(lg({ question: 'Deploy?', environment: 'prod' }))
    expect(shown.message).toBe('Deploy?')
    expect(shown.metadata).toMatchObject({ arguments: { environment: 'prod' } })
  })

  it('keeps a message and a schema the server sent', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } }
    const shown = presentForeignInterrupt({ ...lg({ question: 'Name?' }), message: 'Own', responseSchema: schema })
    expect(shown).toMatchObject({ message: 'Own', responseSchema: schema })
  })

  it('HITL middleware: several actions are one approval, titled by each description, without edits', () => {
    const raw = {
      actionRequests: [
        { name: 'deploy', args: { v: 1 }, description: 'Deploy now\nmore' },
        { name: 'notify', args: {} },
      ],
      reviewConfigs: [{ actionName: 'deploy', allowedDecisions: ['approve', 'edit', 'reject'] }],
    }
    const shown = presentForeignInterrupt(lg(raw))
    expect(shown.message).toBe('Deploy now; Run notify?')
    expect(shown.metadata).toMatchObject({ arguments: { deploy: { v: 1 }, notify: {} } })
    expect((shown.responseSchema as { properties: object }).properties).not.toHaveProperty('editedArgs')
  })
})

describe('foreign interrupts: answers', () => {
  const hitl = presentForeignInterrupt(lg(hitlRequest))

  it('HITL middleware: approve with edits is an edit decision, deny with a reason a rejection', () => {
    const edited = { version: 'v2.2', environment: 'staging' }
    expect(
      adaptResumeEntry(hitl, {
        interruptId: 'i1',
        status: 'resolved',
        payload: { approved: true, editedArgs: edited },
      }),
    ).toEqual({
      interruptId: 'i1',
      status: 'resolved',
      payload: { decisions: [{ type: 'edit', editedAction: { name: 'deploy', args: edited } }] },
    })
    expect(
      adaptResumeEntry(hitl, { interruptId: 'i1', status: 'resolved', payload: { approved: false, reason: 'no' } }),
    ).toMatchObject({ payload: { decisions: [{ type: 'reject', message: 'no' }] } })
  })

  it('an answer already in the server shape is sent unchanged', () => {
    const entry = { interruptId: 'i1', status: 'resolved' as const, payload: { decisions: [{ type: 'approve' }] } }
    expect(adaptResumeEntry(hitl, entry)).toEqual(entry)
  })

  it('a LangGraph interrupt with its own schema keeps a cancel as a cancel', () => {
    const own = presentForeignInterrupt(lg({ question: 'Name?', responseSchema: { type: 'string' } }))
    const entry = { interruptId: 'i1', status: 'cancelled' as const }
    expect(adaptResumeEntry(own, entry)).toBe(entry)
  })

  it('a Mastra suspension without an approval schema keeps a cancel as a cancel', () => {
    const m: Interrupt = {
      id: 'r::c',
      reason: 'mastra:tool_suspend',
      metadata: { mastra: { type: 'mastra_suspend', resumeSchema: '{"type":"object"}' } },
    }
    const entry = { interruptId: 'r::c', status: 'cancelled' as const }
    expect(adaptResumeEntry(m, entry)).toBe(entry)
  })
})

describe('legacy on_interrupt events', () => {
  it('a LangGraph event whose rawEvent was stripped still pauses, numbered', () => {
    const i = legacyInterrupt({ name: 'on_interrupt', value: JSON.stringify({ question: 'Deploy?' }) }, 'r1', 0)
    expect(i).toMatchObject({ id: 'on_interrupt:0', reason: 'langgraph:interrupt' })
    expect(i?.message).toBeUndefined()
    expect(presentForeignInterrupt(i!).message).toBe('Deploy?')
  })

  it('a Mastra event without a tool call id is not a pause', () => {
    const value = JSON.stringify({ type: 'mastra_suspend', toolName: 'deploy' })
    expect(legacyInterrupt({ name: 'on_interrupt', value }, 'r1', 0)).toBeUndefined()
  })
})
