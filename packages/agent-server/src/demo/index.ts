// `@interlude/agent-server/demo`: the release assistant the CLI serves by default (scripted model,
// approval and input interrupts), for examples and end-to-end tests; not part of the server API.
export { ENVIRONMENT_CHOICE_SCHEMA, releaseAssistant, releaseAssistantScript } from './release-assistant.ts'
export type { ReleaseAssistantOptions, ReleaseState } from './release-assistant.ts'
export { MAINTENANCE_WINDOW_SCHEMA } from './maintenance-window.ts'
