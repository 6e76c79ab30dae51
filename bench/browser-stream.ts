/**
 * What a person feels in the browser while a long thread streams (docs/quality.md#benchmarks): in real Chromium
 * (Debian's /usr/bin/chromium through playwright-core), a 2,000-message thread that keeps streaming at about
 * 100 deltas/s, rendered by `useChat` and, side by side in the same run, by a bare React component that appends the
 * same deltas with the same 16 ms coalescing (`browser/stream-page.tsx`). Per round and component, over a measured
 * window after a warm-up:
 *
 * - main-thread busy share: CDP `Performance.getMetrics` TaskDuration over the window / the window's wall time;
 * - long tasks: `PerformanceObserver('longtask')` entries (every one is ≥ 50 ms), count and longest;
 * - renders/s: React `<Profiler>` commits of the component per second; deltas/s shown.
 *
 * Targets: no long task over 50 ms; busy share of `useChat` ≤ 1.5× the bare component's. Medians over the rounds.
 *
 *   cd bench && node --conditions=@interlude/source --import tsx browser-stream.ts
 *   ROUNDS=3 WINDOW_MS=4000 …   (defaults 5 rounds, 5,000 ms window, 1,500 ms warm-up)
 */
import { build } from 'esbuild'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const WINDOW_MS = Number(process.env.WINDOW_MS ?? 5000)
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 1500)
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// The e2e suite's flags (DEVELOPERS.md).
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

type Mode = 'chat' | 'bare'

interface Sample {
  readonly busyShare: number
  readonly longTasks: number
  readonly longestTaskMs: number
  readonly rendersPerSecond: number
  readonly deltasPerSecond: number
}

interface Collected {
  renders: number
  longTasks: number[]
  deltasApplied: number
  deltasSent: number
  at: number
}

const bundle = await build({
  entryPoints: [join(here, 'browser/stream-page.tsx')],
  bundle: true,
  minify: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  target: 'chrome120',
  conditions: ['@interlude/source'],
  define: { 'process.env.NODE_ENV': '"production"' },
  jsx: 'automatic',
  logLevel: 'error',
})
const script = bundle.outputFiles[0]!.text

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true })

async function measure(mode: Mode): Promise<Sample> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  try {
    await page.setContent('<!doctype html><html><body><div id="root"></div></body></html>')
    await page.evaluate((m) => {
      ;(window as unknown as { __BENCH_MODE: string }).__BENCH_MODE = m
    }, mode)
    await page.addScriptTag({ content: script })
    await page.waitForFunction(() => (window as unknown as { __bench: { ready(): boolean } }).__bench.ready())
    const cdp = await context.newCDPSession(page)
    await cdp.send('Performance.enable', { timeDomain: 'timeTicks' })
    const metrics = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics')
      const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0
      return { task: get('TaskDuration'), at: get('Timestamp') }
    }

    await page.evaluate(() => (window as unknown as { __bench: { start(): void } }).__bench.start())
    await page.waitForTimeout(WARMUP_MS)
    const before = await metrics()
    const mark = await page.evaluate(() =>
      (window as unknown as { __bench: { mark(): { deltasApplied: number; at: number } } }).__bench.mark(),
    )
    await page.waitForTimeout(WINDOW_MS)
    const after = await metrics()
    const end = await page.evaluate(() =>
      (window as unknown as { __bench: { collect(): Collected } }).__bench.collect(),
    )
    await page.evaluate(() => (window as unknown as { __bench: { stop(): void } }).__bench.stop())

    const seconds = (end.at - mark.at) / 1000
    return {
      busyShare: (after.task - before.task) / (after.at - before.at),
      longTasks: end.longTasks.length,
      longestTaskMs: Math.max(0, ...end.longTasks),
      rendersPerSecond: end.renders / seconds,
      deltasPerSecond: (end.deltasApplied - mark.deltasApplied) / seconds,
    }
  } finally {
    await context.close()
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const samples: Record<Mode, Sample[]> = { chat: [], bare: [] }
try {
  // Alternate the two components so that load from other work on the machine falls on both alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? (['bare', 'chat'] as const) : (['chat', 'bare'] as const)) {
      samples[mode].push(await measure(mode))
    }
  }
} finally {
  await browser.close()
}

const version = browser.version()
console.log(
  `Chromium ${version}, ${ROUNDS} rounds × ${WINDOW_MS} ms window after ${WARMUP_MS} ms warm-up; 2,000-message thread, ~100 deltas/s, 16 ms coalescing; load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`,
)
const row = (name: string, s: Sample[]) => {
  const busy = median(s.map((x) => x.busyShare))
  return {
    name,
    busy,
    line: [
      name.padEnd(34),
      `${(busy * 100).toFixed(1)}%`.padStart(8),
      String(Math.max(...s.map((x) => x.longTasks))).padStart(11),
      `${median(s.map((x) => x.longestTaskMs)).toFixed(0)} ms`.padStart(13),
      median(s.map((x) => x.rendersPerSecond))
        .toFixed(1)
        .padStart(10),
      median(s.map((x) => x.deltasPerSecond))
        .toFixed(1)
        .padStart(10),
    ].join(' │ '),
  }
}
const chat = row('useChat (ChatRuntime)', samples.chat)
const bare = row('bare React component', samples.bare)
console.log(
  [
    'component'.padEnd(34),
    'busy'.padStart(8),
    'long tasks'.padStart(11),
    'longest task'.padStart(13),
    'renders/s'.padStart(10),
    'deltas/s'.padStart(10),
  ].join(' │ '),
)
console.log(chat.line)
console.log(bare.line)
const ratio = chat.busy / bare.busy
const anyLong = [...samples.chat, ...samples.bare].some((s) => s.longTasks > 0)
const chatLong = samples.chat.reduce((n, s) => n + s.longTasks, 0)
console.log(
  `busy share useChat / bare: ${ratio.toFixed(2)}× (target ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'}); long tasks > 50 ms with useChat: ${chatLong} (target 0: ${chatLong === 0 ? 'met' : 'NOT met'})${anyLong ? '' : ', none in either component'}`,
)
console.log(
  `per round (busy %, chat | bare): ${samples.chat.map((s, i) => `${(s.busyShare * 100).toFixed(1)}|${(samples.bare[i]!.busyShare * 100).toFixed(1)}`).join('  ')}`,
)
