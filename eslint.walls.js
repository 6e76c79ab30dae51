// The import walls of the workspace (docs/architecture.md#layers), as data: each layer may import only the layers
// listed before it. `eslint.config.js` turns them into rules; `packages/agent-server/src/lint/import-walls.test.ts`
// shows that a violation is refused.

import { fileURLToPath } from 'node:url'

const S = 'packages/agent-server/src'
/**
 * The repository root, absolute: `except` globs are matched against absolute paths, and a `**` there would not match a
 * folder whose name starts with a dot (a checkout under `~/.projects`, or the Node 24 copy under `.cache/`).
 */
const ROOT = fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '')

/**
 * The agent server, lowest first. A layer's files may import from its own layer and every earlier one; an import
 * of a later layer is an error. Globs are relative to the repository root.
 */
export const SERVER_LAYERS = [
  {
    name: 'schema and defaults',
    files: [`${S}/schema/**`, `${S}/clock.ts`, `${S}/defined.ts`, `${S}/config/defaults.ts`, `${S}/config/limits.ts`],
  },
  { name: 'store', files: [`${S}/store/**`] },
  { name: 'observability, auth and webhooks', files: [`${S}/observability/**`, `${S}/auth/**`, `${S}/webhooks/**`] },
  { name: 'models', files: [`${S}/models/**`] },
  { name: 'agent', files: [`${S}/agent/**`] },
  {
    // The server's settings as one resolved object: collaborators in the core take `Pick<ServerConfig, …>`.
    name: 'server config',
    files: [`${S}/config/**`],
    // The defaults and limits are the lowest layer (above): anyone may import them. Matched against the absolute path.
    except: [`${ROOT}/${S}/config/{defaults,limits}.ts`],
  },
  { name: 'core vocabulary', files: [`${S}/core/*.ts`] },
  { name: 'core/log', files: [`${S}/core/log/**`] },
  { name: 'core/tools', files: [`${S}/core/tools/**`] },
  { name: 'core/turn', files: [`${S}/core/turn/**`] },
  { name: 'core/runs', files: [`${S}/core/runs/**`] },
  { name: 'core/access', files: [`${S}/core/access/**`] },
  { name: 'core/expiry', files: [`${S}/core/expiry/**`] },
  { name: 'core/admission', files: [`${S}/core/admission/**`] },
  { name: 'http', files: [`${S}/http/**`] },
  { name: 'demo', files: [`${S}/demo/**`] },
  {
    name: 'entry points',
    files: [`${S}/server.ts`, `${S}/cli.ts`, `${S}/cli-*.ts`, `${S}/index.ts`, `${S}/testing.ts`, `${S}/test-utils/**`],
  },
]

/** `import-x/no-restricted-paths` zones: for each layer, every later layer is off limits. */
export const layerWalls = SERVER_LAYERS.flatMap((layer, i) =>
  SERVER_LAYERS.slice(i + 1).flatMap((upper) =>
    layer.files.flatMap((target) =>
      upper.files.map((from) => ({
        target,
        from,
        ...(upper.except ? { except: upper.except } : {}),
        message: `${layer.name} may not import ${upper.name} (layers: docs/architecture.md#layers).`,
      })),
    ),
  ),
)

/** Between packages: protocol knows no other package; client and React know no server; the server knows no client. */
const forbidPackages = (files, names, why) => ({
  files,
  ignores: ['**/*.test.ts', '**/*.test.tsx', '**/test-utils/**'],
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ group: names.flatMap((n) => [n, `${n}/*`]), message: why }] }],
  },
})

export const packageWalls = [
  forbidPackages(
    ['packages/protocol/src/**/*.ts'],
    ['@interlude/agent-server', '@interlude/react', '@interlude/client'],
    '@interlude/protocol is the bottom layer: it imports no other Interlude package.',
  ),
  forbidPackages(
    ['packages/agent-server/src/**/*.ts'],
    ['@interlude/react', '@interlude/client'],
    'The agent server knows no client package.',
  ),
  forbidPackages(
    ['packages/client/src/**/*.ts'],
    ['@interlude/agent-server', '@interlude/react'],
    '@interlude/client knows only @interlude/protocol.',
  ),
]
