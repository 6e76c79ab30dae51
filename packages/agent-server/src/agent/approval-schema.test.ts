import { afterEach, describe, expect, it } from 'vitest'
import { Ajv } from 'ajv'
import { z } from 'zod'
import { ValidatorCache } from '../schema/validator-cache.ts'
import {
  dumpStore,
  interruptsOf,
  newThreadId,
  resumeInput,
  runInput,
  toolResults,
  userMessage,
} from '../test-utils/harness.ts'
import type { InProcessServer } from '../test-utils/in-process.ts'
import { startInProcess } from '../test-utils/in-process.ts'
import { commandAgent } from '../test-utils/test-agents.ts'
import type { JsonSchema } from './tool.ts'
import { approvalResponseSchema, defineTool, toJsonSchema } from './tool.ts'

let server: InProcessServer | undefined
afterEach(async () => {
  await server?.dispose()
  server = undefined
})

const command = (value: unknown) => userMessage(JSON.stringify(value))

/** JSON Schema with root `definitions` and a local `$ref`. */
const pickParameters: JsonSchema = {
  type: 'object',
  definitions: { env: { type: 'string', enum: ['a', 'b'] } },
  properties: { e: { $ref: '#/definitions/env' } },
  required: ['e'],
  additionalProperties: false,
}

/** Same idea with `$defs`, a ref into another property (`#/properties/…`) and one inside the definitions. */
const rangeParameters: JsonSchema = {
  type: 'object',
  $defs: {
    bound: { type: 'integer', minimum: 0 },
    pair: { type: 'array', items: { $ref: '#/$defs/bound' }, maxItems: 2 },
  },
  properties: { from: { $ref: '#/$defs/bound' }, to: { $ref: '#/properties/from' }, both: { $ref: '#/$defs/pair' } },
  required: ['from'],
  additionalProperties: false,
}

interface TreeNode {
  name: string
  children: TreeNode[]
}
const Node: z.ZodType<TreeNode> = z.object({
  name: z.string(),
  get children() {
    return z.array(Node)
  },
})

/** What a client would do: validate an answer against the interrupt's responseSchema alone. */
function clientValidate(schema: JsonSchema, payload: unknown): boolean {
  return new Ajv({ strict: true, allErrors: true }).compile(schema)(payload)
}

describe('allowEdits with local $refs (B2)', () => {
  it('the approval schema hoists definitions/$defs to its root and rebases other local refs', () => {
    const schema = approvalResponseSchema(pickParameters, true)
    expect(schema.definitions).toEqual(pickParameters.definitions)
    const editedArgs = (schema.properties as Record<string, JsonSchema>).editedArgs!
    expect(editedArgs.definitions).toBeUndefined()
    expect(editedArgs.properties).toEqual({ e: { $ref: '#/definitions/env' } })

    const range = approvalResponseSchema(rangeParameters, true)
    expect(range.$defs).toEqual(rangeParameters.$defs)
    expect((range.properties as Record<string, JsonSchema>).editedArgs!.properties).toEqual({
      from: { $ref: '#/$defs/bound' },
      to: { $ref: '#/properties/editedArgs/properties/from' },
      both: { $ref: '#/$defs/pair' },
    })

    // A root-recursive zod schema refers to itself as '#'.
    const root = toJsonSchema(Node)
    expect(JSON.stringify(root)).toContain('"$ref":"#"')
    const rooted = approvalResponseSchema(root, true)
    expect(JSON.stringify(rooted)).toContain('"$ref":"#/properties/editedArgs"')

    // Without allowEdits nothing of the parameters is embedded.
    expect(approvalResponseSchema(pickParameters, false)).toEqual({
      type: 'object',
      properties: { approved: { type: 'boolean' }, reason: { type: 'string', maxLength: 2000 } },
      required: ['approved'],
      additionalProperties: false,
    })
  })

  it('a root-recursive parameter schema (`$ref: "#"`) compiles and validates on the server', () => {
    const validators = new ValidatorCache()
    const root = toJsonSchema(Node)
    expect(validators.validate(root, { name: 'a', children: [{ name: 'b', children: [] }] })).toEqual({ ok: true })
    expect(validators.validate(root, { name: 'a', children: [{ name: 2, children: [] }] }).ok).toBe(false)
    // Two different root-recursive schemas in one cache do not see each other.
    const list = {
      type: 'object',
      properties: { v: { type: 'integer' }, next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } },
      required: ['v'],
      additionalProperties: false,
    }
    expect(validators.validate(list, { v: 1, next: { v: 2, next: null } })).toEqual({ ok: true })
    expect(validators.validate(list, { v: 1, next: { name: 'a', children: [] } }).ok).toBe(false)
    expect(validators.validate(root, { name: 'a', children: [{ v: 1 }] }).ok).toBe(false)
  })

  it('the approval schemas validate on their own (as a client would use them)', () => {
    const pick = approvalResponseSchema(pickParameters, true)
    expect(clientValidate(pick, { approved: true, editedArgs: { e: 'b' } })).toBe(true)
    expect(clientValidate(pick, { approved: true, editedArgs: { e: 'c' } })).toBe(false)
    const range = approvalResponseSchema(rangeParameters, true)
    expect(clientValidate(range, { approved: true, editedArgs: { from: 1, to: 2, both: [0, 3] } })).toBe(true)
    expect(clientValidate(range, { approved: true, editedArgs: { from: 1, to: -2 } })).toBe(false)
    expect(clientValidate(range, { approved: true, editedArgs: { from: 1, both: [0, -1] } })).toBe(false)
    const tree = approvalResponseSchema(toJsonSchema(Node), true)
    expect(
      clientValidate(tree, { approved: true, editedArgs: { name: 'a', children: [{ name: 'b', children: [] }] } }),
    ).toBe(true)
    expect(clientValidate(tree, { approved: true, editedArgs: { name: 'a', children: [{ name: 'b' }] } })).toBe(false)
  })

  it('a server with such tools starts; editedArgs are admitted or refused (RESUME_PAYLOAD_INVALID per interrupt) correctly', async () => {
    const ran: { tool: string; args: unknown }[] = []
    const tools = [
      defineTool({
        name: 'pick',
        description: 'x',
        parameters: pickParameters,
        approval: 'always',
        allowEdits: true,
        execute: (args) => ran.push({ tool: 'pick', args }),
      }),
      defineTool({
        name: 'range',
        description: 'x',
        parameters: rangeParameters,
        approval: 'always',
        allowEdits: true,
        execute: (args) => ran.push({ tool: 'range', args }),
      }),
      defineTool({
        name: 'tree',
        description: 'x',
        parameters: z.object({ root: Node }),
        approval: 'always',
        allowEdits: true,
        execute: (args) => ran.push({ tool: 'tree', args }),
      }),
      defineTool({
        name: 'node',
        description: 'x',
        parameters: Node,
        approval: 'always',
        allowEdits: true,
        execute: (args) => ran.push({ tool: 'node', args }),
      }),
    ]
    server = await startInProcess({ agent: commandAgent(tools) })
    const threadId = newThreadId()
    const leaf = { name: 'leaf', children: [] }
    const paused = await server.postRun(
      runInput(threadId, [
        command({
          toolCalls: [
            { name: 'pick', args: { e: 'a' } },
            { name: 'range', args: { from: 1 } },
            { name: 'tree', args: { root: leaf } },
            { name: 'node', args: leaf },
          ],
        }),
      ]),
    )
    const [pick, range, tree, node] = interruptsOf(paused.events)
    expect(node).toBeDefined()

    const before = dumpStore(server.dbPath)
    const invalid = await server.postRun(
      resumeInput(threadId, [
        { interruptId: pick!.id, status: 'resolved', payload: { approved: true, editedArgs: { e: 'c' } } },
        { interruptId: range!.id, status: 'resolved', payload: { approved: true, editedArgs: { from: 1, to: -1 } } },
        {
          interruptId: tree!.id,
          status: 'resolved',
          payload: { approved: true, editedArgs: { root: { name: 'x', children: [{ name: 1, children: [] }] } } },
        },
        {
          interruptId: node!.id,
          status: 'resolved',
          payload: { approved: true, editedArgs: { name: 'x', children: [{}] } },
        },
      ]),
    )
    expect(invalid.status).toBe(422)
    expect(invalid.error?.code).toBe('RESUME_PAYLOAD_INVALID')
    const errors = (invalid.error?.details as { errors: Record<string, { path: string }[]> }).errors
    expect(Object.keys(errors).sort()).toEqual([pick!.id, range!.id, tree!.id, node!.id].sort())
    expect(errors[pick!.id]!.map((e) => e.path)).toContain('/editedArgs/e')
    expect(errors[range!.id]!.map((e) => e.path)).toContain('/editedArgs/to')
    expect(errors[tree!.id]!.map((e) => e.path)).toContain('/editedArgs/root/children/0/name')
    expect(errors[node!.id]!.map((e) => e.path)).toContain('/editedArgs/children/0')
    expect(dumpStore(server.dbPath)).toEqual(before)
    expect(ran).toEqual([])

    const edited = { name: 'x', children: [{ name: 'y', children: [] }] }
    const valid = await server.postRun(
      resumeInput(threadId, [
        { interruptId: pick!.id, status: 'resolved', payload: { approved: true, editedArgs: { e: 'b' } } },
        {
          interruptId: range!.id,
          status: 'resolved',
          payload: { approved: true, editedArgs: { from: 2, to: 3, both: [2, 3] } },
        },
        { interruptId: tree!.id, status: 'resolved', payload: { approved: true, editedArgs: { root: edited } } },
        { interruptId: node!.id, status: 'resolved', payload: { approved: true, editedArgs: edited } },
      ]),
    )
    expect(valid.status).toBe(200)
    expect(toolResults(valid.events)).toHaveLength(4)
    expect(ran).toEqual([
      { tool: 'pick', args: { e: 'b' } },
      { tool: 'range', args: { from: 2, to: 3, both: [2, 3] } },
      { tool: 'tree', args: { root: edited } },
      { tool: 'node', args: edited },
    ])
  })
})
