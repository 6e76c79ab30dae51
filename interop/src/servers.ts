/**
 * What other workspace packages (the e2e suite) use of this one: starting its real servers as children.
 */
export { nodeForMastra, startChild } from './support/child-server.ts'
export type { ChildOptions, ChildServer } from './support/child-server.ts'
export type { LangGraphUrls } from './support/urls.ts'
