import { InterludeError } from '@interlude/protocol'
import { z } from 'zod'
import { MULTITASK_STRATEGIES } from '../../config/multitask.ts'
import type { MultitaskStrategy } from '../../config/multitask.ts'

const Strategy = z.enum(MULTITASK_STRATEGIES)

/**
 * `forwardedProps.interlude.multitask` of a run input, or the server's default when the input names none
 * (docs/protocol.md#multitask). Any other value is `INVALID_INPUT` before anything is read or written.
 */
export function multitaskOf(forwardedProps: unknown, fallback: MultitaskStrategy): MultitaskStrategy {
  if (typeof forwardedProps !== 'object' || forwardedProps === null) return fallback
  const interlude = (forwardedProps as { interlude?: unknown }).interlude
  if (typeof interlude !== 'object' || interlude === null) return fallback
  const value = (interlude as { multitask?: unknown }).multitask
  if (value === undefined) return fallback
  const parsed = Strategy.safeParse(value)
  if (parsed.success) return parsed.data
  throw new InterludeError(
    'INVALID_INPUT',
    `forwardedProps.interlude.multitask must be one of: ${MULTITASK_STRATEGIES.join(', ')}.`,
    { details: { field: 'forwardedProps.interlude.multitask', supported: [...MULTITASK_STRATEGIES] } },
  )
}
