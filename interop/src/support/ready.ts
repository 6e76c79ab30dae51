/** The start of the line a server child prints when it listens, followed by its URLs as JSON. */
export const READY = 'INTEROP_READY'
