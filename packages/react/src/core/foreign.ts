/** What ./foreign-support.ts loads on first need: everything foreign bridges need, in one chunk. */
export { adaptResumeEntry, presentForeignInterrupt } from './foreign-answers.ts'
export { legacyInterrupt } from './foreign-interrupts.ts'
