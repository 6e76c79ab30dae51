import type { JsonPatch, Message } from '@interlude/protocol'
import { deepEqual, deepFreeze } from './immutable.ts'
import { applyPatch } from './json-patch.ts'

/**
 * A copy-on-write draft of the message list for one batch of events (`apply-events.ts`): the list is
 * copied at most once, each touched message is cloned once, and text/argument deltas are kept as
 * chunks until `result()` joins them. Untouched messages keep their identity.
 */

export type AnyMessage = { readonly id: string; readonly role: string; readonly [key: string]: unknown }
type ToolCallShape = {
  readonly id: string
  readonly type: 'function'
  readonly function: { readonly name: string; readonly arguments: string }
}
type Writable = { -readonly [K in keyof AnyMessage]: AnyMessage[K] } & { id: string; role: string }

interface Edit {
  readonly msg: Writable
  text: string[] | undefined
  toolCalls: ToolCallShape[] | undefined
  args: Map<string, string[]> | undefined
}

export class Draft {
  #base: readonly AnyMessage[]
  #list: AnyMessage[] | undefined
  #index: Map<string, number> | undefined
  #toolIndex: Map<string, number> | undefined
  readonly #edits = new Map<number, Edit>()
  #chunkMessageId: string | undefined
  #chunkToolCallId: string | undefined
  state: unknown
  fault: string | undefined

  constructor(messages: readonly Message[], state: unknown) {
    this.#base = messages as readonly AnyMessage[]
    this.state = state
  }

  get #current(): readonly AnyMessage[] {
    return this.#list ?? this.#base
  }

  #writable(): AnyMessage[] {
    this.#list ??= this.#base.slice()
    return this.#list
  }

  indexOf(id: string): number | undefined {
    if (!this.#index) {
      this.#index = new Map()
      this.#current.forEach((m, i) => this.#index!.set(m.id, i))
    }
    return this.#index.get(id)
  }

  #toolOwner(toolCallId: string): number | undefined {
    if (!this.#toolIndex) {
      this.#toolIndex = new Map()
      this.#current.forEach((m, i) => {
        const calls = m.toolCalls
        if (Array.isArray(calls)) for (const c of calls as ToolCallShape[]) this.#toolIndex!.set(c.id, i)
      })
    }
    return this.#toolIndex.get(toolCallId)
  }

  add(message: AnyMessage): number {
    const list = this.#writable()
    const i = list.length
    list.push(Object.freeze(message))
    this.indexOf(message.id) // builds the index before setting, so the new entry is not lost
    this.#index!.set(message.id, i)
    return i
  }

  edit(i: number): Edit {
    let e = this.#edits.get(i)
    if (!e) {
      e = {
        msg: { ...(this.#current[i] as AnyMessage) } as Writable,
        text: undefined,
        toolCalls: undefined,
        args: undefined,
      }
      this.#edits.set(i, e)
      this.#writable()
    }
    return e
  }

  /** Index of a text-bearing message, created as an assistant message when unknown (tolerant). */
  #ensureText(id: string, role: string = 'assistant', name?: unknown): number {
    const found = this.indexOf(id)
    if (found !== undefined) return found
    const msg: Writable = { id, role, content: '' }
    if (typeof name === 'string') msg.name = name
    return this.add(msg)
  }

  appendText(id: string, delta: string, role?: string): void {
    if (delta === '') {
      this.#ensureText(id, role)
      return
    }
    const e = this.edit(this.#ensureText(id, role))
    if (typeof e.msg.content !== 'string') e.msg.content = ''
    ;(e.text ??= []).push(delta)
  }

  startText(id: string, role: string, name: unknown): void {
    const found = this.indexOf(id)
    if (found === undefined) {
      this.#ensureText(id, role, name)
      return
    }
    const e = this.edit(found)
    e.msg.content = ''
    e.text = undefined
  }

  startToolCall(toolCallId: string, name: string, parentMessageId: unknown): void {
    const owner = this.#toolOwner(toolCallId)
    if (owner !== undefined) {
      // Replayed start: restart the arguments.
      const e = this.edit(owner)
      const calls = this.#calls(e)
      const k = calls.findIndex((c) => c.id === toolCallId)
      if (k >= 0) calls[k] = { ...calls[k]!, function: { name, arguments: '' } }
      e.args?.delete(toolCallId)
      return
    }
    const parentId = typeof parentMessageId === 'string' ? parentMessageId : undefined
    let i = parentId === undefined ? undefined : this.indexOf(parentId)
    if (i === undefined) {
      const list = this.#current
      const last = list[list.length - 1]
      // Without a known parent, calls of one model response share the assistant message that
      // started them (the last one, if it is an assistant message made by this stream).
      if (parentId === undefined && last && last.role === 'assistant' && this.#edits.has(list.length - 1))
        i = list.length - 1
      else i = this.add({ id: parentId ?? toolCallId, role: 'assistant' })
    }
    const e = this.edit(i)
    this.#calls(e).push({ id: toolCallId, type: 'function', function: { name, arguments: '' } })
    this.#toolIndex!.set(toolCallId, i)
  }

  #calls(e: Edit): ToolCallShape[] {
    if (!e.toolCalls) {
      e.toolCalls = Array.isArray(e.msg.toolCalls) ? (e.msg.toolCalls as ToolCallShape[]).slice() : []
      e.msg.toolCalls = e.toolCalls
    }
    return e.toolCalls
  }

  appendArgs(toolCallId: string, delta: string): void {
    const owner = this.#toolOwner(toolCallId)
    if (owner === undefined) {
      this.fault ??= `TOOL_CALL_ARGS for unknown tool call ${toolCallId}`
      return
    }
    const e = this.edit(owner)
    this.#calls(e)
    e.args ??= new Map()
    let chunks = e.args.get(toolCallId)
    if (!chunks) e.args.set(toolCallId, (chunks = []))
    chunks.push(delta)
  }

  upsert(message: AnyMessage): void {
    const i = this.indexOf(message.id)
    if (i === undefined) {
      this.add(deepFreeze(message))
      return
    }
    this.#edits.delete(i)
    this.#writable()[i] = deepFreeze(message)
  }

  toolResult(messageId: string, toolCallId: string, content: unknown): void {
    this.upsert({ id: messageId, role: 'tool', toolCallId, content })
  }

  activity(messageId: string, activityType: string, content: unknown, replace: boolean): void {
    if (!replace && this.indexOf(messageId) !== undefined) return
    this.upsert({ id: messageId, role: 'activity', activityType, content })
  }

  activityDelta(messageId: string, patch: JsonPatch): void {
    const i = this.indexOf(messageId)
    if (i === undefined) {
      this.fault ??= `ACTIVITY_DELTA for unknown activity ${messageId}`
      return
    }
    this.materialize()
    const current = this.#current[i]!
    try {
      this.upsert({ ...current, content: applyPatch(current.content, patch) })
    } catch (error) {
      this.fault ??= `ACTIVITY_DELTA does not apply: ${String(error)}`
    }
  }

  /** MESSAGES_SNAPSHOT: the server's list wins; equal messages keep their previous identity. */
  replaceAll(messages: readonly AnyMessage[]): void {
    this.materialize()
    const previous = new Map<string, AnyMessage>()
    for (const m of this.#current) previous.set(m.id, m)
    this.#list = messages.map((m) => {
      const old = previous.get(m.id)
      return old !== undefined && deepEqual(old, m) ? old : deepFreeze({ ...m })
    })
    this.#index = undefined
    this.#toolIndex = undefined
  }

  chunkMessage(
    event: { messageId?: unknown; role?: unknown; name?: unknown; delta?: unknown },
    roleDefault: string,
  ): void {
    const id = typeof event.messageId === 'string' ? event.messageId : this.#chunkMessageId
    if (id === undefined) {
      this.fault ??= 'chunk without a message id'
      return
    }
    if (id !== this.#chunkMessageId && this.indexOf(id) === undefined) {
      this.#ensureText(id, typeof event.role === 'string' ? event.role : roleDefault, event.name)
    }
    this.#chunkMessageId = id
    if (typeof event.delta === 'string') this.appendText(id, event.delta)
  }

  chunkToolCall(event: {
    toolCallId?: unknown
    toolCallName?: unknown
    parentMessageId?: unknown
    delta?: unknown
  }): void {
    const id = typeof event.toolCallId === 'string' ? event.toolCallId : this.#chunkToolCallId
    if (id === undefined) {
      this.fault ??= 'tool call chunk without a tool call id'
      return
    }
    if (id !== this.#chunkToolCallId && this.#toolOwner(id) === undefined) {
      this.startToolCall(id, typeof event.toolCallName === 'string' ? event.toolCallName : '', event.parentMessageId)
    }
    this.#chunkToolCallId = id
    if (typeof event.delta === 'string') this.appendArgs(id, event.delta)
  }

  /** Turns pending edits into new frozen message objects. */
  materialize(): void {
    if (this.#edits.size === 0) return
    const list = this.#writable()
    for (const [i, e] of this.#edits) {
      const msg = e.msg
      if (e.text) msg.content = (msg.content as string) + (e.text.length === 1 ? e.text[0]! : e.text.join(''))
      if (e.toolCalls) {
        const calls = e.toolCalls
        for (let k = 0; k < calls.length; k++) {
          const call = calls[k]!
          const chunks = e.args?.get(call.id)
          const next = chunks
            ? { ...call, function: { name: call.function.name, arguments: call.function.arguments + chunks.join('') } }
            : call
          if (!Object.isFrozen(next)) {
            Object.freeze(next.function)
            Object.freeze(next)
          }
          calls[k] = next
        }
        Object.freeze(calls)
      }
      list[i] = Object.freeze(msg)
    }
    this.#edits.clear()
  }

  result(): readonly Message[] {
    this.materialize()
    if (!this.#list) return this.#base as readonly Message[]
    return Object.freeze(this.#list) as readonly Message[]
  }
}
