import type { Recording } from './recording-types.ts'
import type { RecordingCheck } from './validate-recording.ts'
import { parseRecording } from './validate-recording.ts'

/** Offers a recording as a JSON file download (a user action in live mode; nothing is uploaded). */
export function downloadRecording(recording: Recording, fileName = defaultFileName(recording)): void {
  const blob = new Blob([JSON.stringify(recording, null, 1)], { type: 'application/json' })
  const url = URL.createObjectURL(blob)
  const anchor = document.createElement('a')
  anchor.href = url
  anchor.download = fileName
  anchor.rel = 'noopener'
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  // Revoke on the next task: the click has started the download by then.
  setTimeout(() => URL.revokeObjectURL(url), 0)
}

export function defaultFileName(recording: Recording): string {
  return `interlude-recording-${recording.createdAt.replace(/[:.]/g, '-')}.json`
}

/** Reads and checks a recording from a file the person picked. */
export async function readRecordingFile(file: Blob): Promise<RecordingCheck> {
  return parseRecording(await textOf(file))
}

function textOf(file: Blob): Promise<string> {
  if (typeof file.text === 'function') return file.text()
  // Environments without Blob#text (older DOM implementations) still have FileReader.
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(String(reader.result))
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'))
    reader.readAsText(file)
  })
}
