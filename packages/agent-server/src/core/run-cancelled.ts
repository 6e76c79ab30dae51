/**
 * The run was asked to stop (an explicit cancel or a server shutdown), seen at one of its stop
 * points: before each model call, before each model chunk, before a tool starts. The turn loop
 * turns it into `RUN_FINISHED { outcome: cancelled }`; it never reaches a client as an error.
 */
export class RunCancelled extends Error {}
