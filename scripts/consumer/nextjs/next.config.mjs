// The agent server runs inside a route handler on Node.js: keep it (and its database drivers) out of the bundle, so
// better-sqlite3's native module and pg load from node_modules as they do in any Node process.
/** @type {import('next').NextConfig} */
const nextConfig = {
  serverExternalPackages: ['@interlude/agent-server', 'better-sqlite3', 'pg'],
  // The consumer test runs offline: no telemetry, no image optimiser downloads.
  images: { unoptimized: true },
}
export default nextConfig
