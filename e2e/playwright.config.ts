import { defineConfig } from '@playwright/test'

// Debian's Chromium (no browser downloads on this network), flags from DEVELOPERS.md. Playwright
// launches every browser with a fresh temporary profile (--user-data-dir).
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export default defineConfig({
  testDir: 'tests',
  outputDir: 'artifacts/test-results',
  globalSetup: './global-setup.ts',
  // One worker: the machine is small and shared; every test starts its own server.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['json', { outputFile: 'artifacts/results.json' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    actionTimeout: 10_000,
  },
  projects: [
    { name: 'chromium', testIgnore: /record-shipped|nextjs/ },
    // The Next.js consumer app, started by scripts/consumer-nextjs.sh, which sets NEXT_APP_URL.
    ...(process.env.NEXT_APP_URL ? [{ name: 'nextjs', testMatch: /nextjs/ }] : []),
    // Re-records the shipped recordings from real runs: INTERLUDE_RECORD=1 playwright test --project record
    ...(process.env.INTERLUDE_RECORD === '1' ? [{ name: 'record', testMatch: /record-shipped/ }] : []),
  ],
})
