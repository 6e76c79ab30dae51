import { describe, expect, it } from 'vitest'
import { SetupError } from '../store/optional-peer.ts'
import { checkOpenAISetup } from './openai-setup.ts'

const missing = () =>
  Promise.reject(Object.assign(new Error("Cannot find package 'openai'"), { code: 'ERR_MODULE_NOT_FOUND' }))

describe('checkOpenAISetup', () => {
  it('refuses to start without a key or a base URL, with a sentence', async () => {
    const error = await checkOpenAISetup({}, {}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SetupError)
    expect((error as Error).message).toMatch(/set OPENAI_API_KEY/)
  })

  it('accepts a key from the environment or the options, or a local base URL without a key', async () => {
    await expect(checkOpenAISetup({}, { OPENAI_API_KEY: 'sk-test' })).resolves.toBeUndefined()
    await expect(checkOpenAISetup({ apiKey: 'sk-test' }, {})).resolves.toBeUndefined()
    await expect(checkOpenAISetup({}, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' })).resolves.toBeUndefined()
  })

  it('names the package when it is not installed', async () => {
    const error = await checkOpenAISetup({}, { OPENAI_API_KEY: 'k' }, missing).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SetupError)
    expect((error as Error).message).toContain('npm install openai')
  })

  it('passes other load failures through unchanged', async () => {
    const boom = new Error('boom')
    await expect(checkOpenAISetup({}, { OPENAI_API_KEY: 'k' }, () => Promise.reject(boom))).rejects.toBe(boom)
  })
})
