import type { OpenAIModelOptions } from './openai.ts'
import { isModuleNotFound, missingPeer, SetupError } from '../store/optional-peer.ts'

/**
 * What `--model openai` needs before the server listens: the `openai` package and a key (or a base URL of a local,
 * OpenAI-compatible server, which usually needs none). Without this check the server started and every run answered
 * "unavailable; try again later" (retryable), with the cause only in the server's log (docs/decisions.md#platforms).
 */
export async function checkOpenAISetup(
  options: OpenAIModelOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
  load: () => Promise<unknown> = () => import('openai'),
): Promise<void> {
  const key = options.apiKey ?? env.OPENAI_API_KEY
  const baseURL = options.baseURL ?? env.OPENAI_BASE_URL
  if (options.client === undefined && (key === undefined || key === '') && (baseURL === undefined || baseURL === '')) {
    throw new SetupError(
      'The OpenAI model needs an API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible ' +
        'server), or start with --model scripted.',
    )
  }
  if (options.client !== undefined) return
  try {
    await load()
  } catch (error) {
    throw isModuleNotFound(error) ? missingPeer('openai', 'The OpenAI model (--model openai)', error) : error
  }
}
