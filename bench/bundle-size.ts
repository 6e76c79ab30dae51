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

/**
 * What a page loads up front: the entry chunk and the chunks it imports statically. Chunks reached only by a dynamic
 * `import()` (foreign-server support, docs/react-runtime.md#measurements) are loaded on first need and reported apart.
 */
async function measure(source: string, resolveDir: string): Promise<{ min: number; gz: number; lazy: number }> {
  const result = await build({
    stdin: { contents: source, resolveDir, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    splitting: true,
    outdir: 'out',
    metafile: true,
    conditions: ['@interlude/source'],
    external: ['react', 'react-dom', 'react/jsx-runtime'],
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const outputs = result.metafile.outputs
  const entry = Object.keys(outputs).find((path) => outputs[path]!.entryPoint !== undefined)!
  const upfront = new Set<string>()
  const visit = (path: string) => {
    if (upfront.has(path)) return
    upfront.add(path)
    for (const i of outputs[path]!.imports) if (i.kind === 'import-statement' && outputs[i.path]) visit(i.path)
  }
  visit(entry)
  let min = 0
  let gz = 0
  let lazy = 0
  for (const file of result.outputFiles) {
    const path = Object.keys(outputs).find((p) => file.path.endsWith(p))
    const size = gzipSync(file.contents, { level: 9 }).length
    if (path !== undefined && upfront.has(path)) {
      min += file.contents.length
      gz += size
    } else lazy += size
  }
  return { min, gz, lazy }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB (${n.toLocaleString('en-US')} B)`
console.log('| bundle | minified | min+gzip | loaded on first need (min+gzip) |')
console.log('|---|---|---|---|')
let hook = 0
for (const [name, source] of entries) {
  // The validator is a dependency of the client package, not of the bench.
  const { min, gz, lazy } = await measure(source, name.includes('cfworker') ? join(here, '../packages/react') : here)
  if (name.startsWith('useChat')) hook = gz
  console.log(`| ${name} | ${kb(min)} | ${kb(gz)} | ${lazy ? kb(lazy) : '–'} |`)
}
console.log(`\ntarget: useChat + runtime <= 20 KB min+gzip: ${hook <= 20 * 1024 ? 'met' : 'MISSED'} (${kb(hook)})`)
