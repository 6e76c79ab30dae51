// Every entry with its types, as a Node server and a framework-free client would import them.
import {
  createAgentServer,
  createPostgresStore,
  scriptedModel,
  type PostgresStoreOptions,
} from '@interlude/agent-server'
import { releaseAssistant } from '@interlude/agent-server/demo'
import type { TestServer } from '@interlude/agent-server/testing'
import { InterludeError, parseExpiresAt, type RunAgentInput } from '@interlude/protocol'
import { ThreadSnapshotSchema } from '@interlude/protocol/schemas'
import { ChatRuntime, type ChatRuntimeOptions } from '@interlude/react/core'

const options: PostgresStoreOptions = { connectionString: 'postgres://localhost/app', pool: { ssl: false } }
const runtimeOptions: ChatRuntimeOptions = { runUrl: '/awp', mode: 'plain' }
export const parts = [
  createAgentServer,
  createPostgresStore,
  scriptedModel,
  releaseAssistant,
  InterludeError,
  parseExpiresAt,
  ThreadSnapshotSchema,
  new ChatRuntime(runtimeOptions),
  options,
]
export type Types = [RunAgentInput, TestServer]
