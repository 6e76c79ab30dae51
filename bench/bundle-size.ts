/**
 * Minified + gzipped size of the client, bundled for the browser with esbuild (react external):
 * useChat + ChatRuntime (target ≤ 20 KB), the framework-free core alone, the form helpers
 * (reported separately), the two JSON Schema validators considered for the forms, and
 * @ag-ui/client's HttpAgent for comparison.
 *
 *   node --conditions=@interlude/source --import tsx bench/bundle-size.ts
 */
import { build } from 'esbuild'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))
// Ajv is not a dependency of the client; measure the copy the agent server uses.
const ajvPath = createRequire(join(here, '../packages/agent-server/package.json')).resolve('ajv')

const entries: [name: string, source: string][] = [
  ['useChat + ChatRuntime (@interlude/react)', `export { useChat } from '@interlude/react'`],
  ['ChatRuntime + HTTP transport (@interlude/react/core)', `export { ChatRuntime } from '@interlude/react/core'`],
  [
    'form helpers: useInterruptForm + <InterruptForm> (incl. validator)',
    `export { useInterruptForm, InterruptForm } from '@interlude/react'`,
  ],
  [
    'validator: @cfworker/json-schema',
    `import { Validator } from '@cfworker/json-schema'; export const v = (s, x) => new Validator(s, '2020-12').validate(x)`,
  ],
  [
    'validator: ajv 8 (default draft-07 entry)',
    `import Ajv from ${JSON.stringify(ajvPath)}; export const v = (s, x) => new Ajv({ strict: false }).validate(s, x)`,
  ],
  ['@ag-ui/client HttpAgent', `export { HttpAgent } from '@ag-ui/client'`],
]

async function measure(source: string, resolveDir: string): Promise<{ min: number; gz: number }> {
  const result = await build({
    stdin: { contents: source, resolveDir, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    conditions: ['@interlude/source'],
    external: ['react', 'react-dom', 'react/jsx-runtime'],
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const code = result.outputFiles[0]!.contents
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB (${n.toLocaleString('en-US')} B)`
console.log('| bundle | minified | min+gzip |')
console.log('|---|---|---|')
let hook = 0
for (const [name, source] of entries) {
  // The validator is a dependency of the client package, not of the bench.
  const { min, gz } = await measure(source, name.includes('cfworker') ? join(here, '../packages/react') : here)
  if (name.startsWith('useChat')) hook = gz
  console.log(`| ${name} | ${kb(min)} | ${kb(gz)} |`)
}
console.log(`\ntarget: useChat + runtime <= 20 KB min+gzip: ${hook <= 20 * 1024 ? 'met' : 'MISSED'} (${kb(hook)})`)
