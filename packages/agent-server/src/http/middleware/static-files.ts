import fs from 'node:fs'
import path from 'node:path'
import type { MiddlewareHandler } from 'hono'
import { serveStatic } from '@hono/node-server/serve-static'
import { secureHeaders } from 'hono/secure-headers'

/**
 * The Content-Security-Policy of static answers: the built workbench loads its module scripts, styles and images from
 * its own origin and calls the API on it; nothing may frame it (its Approve button must not be clickable from another
 * site), and it has no plugins, forms to foreign origins or base-URI changes.
 */
export const STATIC_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  // React sets style attributes; component libraries may add <style> elements.
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
}

/** Hono's maintained secure-headers middleware, as the static answers need it (no HSTS: TLS is the proxy's call). */
const staticHeaders = secureHeaders({
  contentSecurityPolicy: STATIC_CSP,
  xContentTypeOptions: 'nosniff',
  xFrameOptions: 'DENY',
  referrerPolicy: 'no-referrer',
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: 'same-origin',
  crossOriginOpenerPolicy: 'same-origin',
})

/** API answers (JSON, SSE) are never to be content-sniffed into something else; nothing more is set on them. */
export const apiSecurityHeaders = secureHeaders({
  xContentTypeOptions: 'nosniff',
  xFrameOptions: false,
  referrerPolicy: false,
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
  removePoweredBy: false,
})

function inside(root: string, target: string): boolean {
  return target === root || target.startsWith(root + path.sep)
}

/**
 * Whether a request path may be served from `root` (already a realpath): no segment starting with a dot (`.env`,
 * `.git/config`, `..`), and the file it resolves to — through any symlinks, and its `index.html` for a directory —
 * stays inside the root. Anything else is answered 404 by the app, like a missing file.
 */
async function servable(root: string, requestPath: string): Promise<boolean> {
  let decoded: string
  try {
    decoded = decodeURIComponent(requestPath)
  } catch {
    return false
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return false
  if (decoded.split('/').some((segment) => segment.startsWith('.'))) return false
  let real: string
  try {
    real = await fs.promises.realpath(path.join(root, decoded))
  } catch {
    return false
  }
  if (!inside(root, real)) return false
  const stat = await fs.promises.stat(real).catch(() => undefined)
  if (!stat?.isDirectory()) return true
  const index = await fs.promises.realpath(path.join(real, 'index.html')).catch(() => undefined)
  return index !== undefined && inside(root, index)
}

/**
 * `--static`: serves a built app (the workbench) from `root` with `@hono/node-server`'s serveStatic, behind the checks
 * of `servable` and with the security headers of `STATIC_CSP` (also on its 404s).
 */
export function staticFiles(root: string): MiddlewareHandler {
  const realRoot = fs.realpathSync(root)
  const serve = serveStatic({ root: realRoot })
  return async function staticFiles(c, next) {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next()
    return staticHeaders(c, async () => {
      if (!(await servable(realRoot, c.req.path))) return next()
      const answered = await serve(c, next)
      if (answered) c.res = answered
    })
  }
}
