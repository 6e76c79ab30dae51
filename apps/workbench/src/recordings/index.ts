import type { Recording } from '../recording/recording-types.ts'
import { checkRecording } from '../recording/validate-recording.ts'

/**
 * The recordings shipped with the workbench (made from real runs, see README). They are bundled
 * into the app, so opening one from the menu makes no request.
 */

export interface ShippedRecording {
  readonly id: string
  readonly title: string
  readonly recording: Recording
}

const modules = import.meta.glob<unknown>('./*.json', { eager: true, import: 'default' })

export const SHIPPED_RECORDINGS: readonly ShippedRecording[] = Object.entries(modules)
  .sort(([a], [b]) => a.localeCompare(b))
  .flatMap(([path, value]) => {
    const check = checkRecording(value)
    if (!check.ok) {
      console.error(`shipped recording ${path} is invalid:`, check.problems)
      return []
    }
    const id = path.replace(/^\.\//, '').replace(/\.json$/, '')
    return [{ id, title: check.recording.meta.title, recording: check.recording }]
  })
