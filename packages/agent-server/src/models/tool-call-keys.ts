/**
 * Which call a streamed tool-call delta belongs to. OpenAI numbers parallel calls by `index`, but
 * compatible servers (Gemini's endpoint, several proxies) omit `index` or send `index: 0` for every
 * call with distinct ids, so the index alone would merge two calls into one. The rule: a delta with
 * a new `id` starts a new call; a delta without `id` continues the call with the same `index` if
 * there is one, else the most recent call. A delta without `id` and with an unseen `index` starts a
 * call too (servers that never send ids still number their calls).
 */
export class ToolCallKeys {
  readonly #byId = new Map<string, string>()
  readonly #byIndex = new Map<number, string>()
  #last: string | undefined
  #count = 0

  /** The key of the call this delta belongs to (stable for the whole stream). */
  keyOf(delta: { readonly id?: string | null | undefined; readonly index?: number | null | undefined }): string {
    const id = typeof delta.id === 'string' && delta.id.length > 0 ? delta.id : undefined
    const index = typeof delta.index === 'number' ? delta.index : undefined
    let key: string | undefined
    if (id !== undefined) {
      key = this.#byId.get(id)
      if (key === undefined) {
        key = this.#next()
        this.#byId.set(id, key)
      }
    } else if (index !== undefined) {
      key = this.#byIndex.get(index) ?? this.#next()
    } else {
      key = this.#last ?? this.#next()
    }
    // The newest call at an index is the one its id-less continuations extend.
    if (index !== undefined) this.#byIndex.set(index, key)
    this.#last = key
    return key
  }

  #next(): string {
    return String(this.#count++)
  }
}
