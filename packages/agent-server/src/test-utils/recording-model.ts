import type { ModelProvider, ModelRequest } from '../models/model.ts'

/** A model that records every request before `inner` answers it: count model calls, read what the model was told. */
export function recordingModel(inner: ModelProvider): ModelProvider & { readonly requests: ModelRequest[] } {
  const requests: ModelRequest[] = []
  return {
    name: `recording(${inner.name})`,
    requests,
    stream(request) {
      requests.push(request)
      return inner.stream(request)
    },
  }
}
