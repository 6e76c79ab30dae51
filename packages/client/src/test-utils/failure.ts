import { InterludeError } from '@interlude/protocol'

/** The `InterludeError` a promise rejects with; anything else (or no rejection) fails the test. */
export async function failure(promise: Promise<unknown>): Promise<InterludeError> {
  try {
    await promise
  } catch (error) {
    if (InterludeError.isInstance(error)) return error
    throw error
  }
  throw new Error('did not fail')
}
