// The console's bench, in Debian's chromium driven by playwright-core; benches/console.rs runs
// it against a release-built mesh and appends the events. Talks to that process in lines:
//   → "ready"                 the session page is live with its history shown (idle measured)
//   ← "sent <first> <last>"   the events appended at 100/s have seqs first..=last
//   → "result <json>"         first paint, when each event showed, CPU and heap
//
// env: BASE, KEY (a key to sign in with), SESSION, PLAYWRIGHT, CHROMIUM, RUNS (first-paint runs)

import { createRequire } from 'node:module';
import readline from 'node:readline';

const { BASE, KEY, SESSION, PLAYWRIGHT, CHROMIUM } = process.env;
const RUNS = Number(process.env.RUNS || 5);
const require = createRequire(`${PLAYWRIGHT}/`);
const { chromium } = require('playwright-core');
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const log = (m) => process.stderr.write(`console bench: ${m}\n`);

/** Polls `fn` in the page until it returns a truthy value; throws after `ms`. */
async function until(page, what, fn, arg, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not met in ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Installed before the page's own script: records when the first event row and each event row
// (by seq) is in the DOM, in wall-clock ms (comparable with the appender's clock).
function recorder() {
  window.__shown = [];
  window.__firstRow = null;
  const wall = () => performance.timeOrigin + performance.now();
  new MutationObserver((records) => {
    const at = wall();
    for (const r of records)
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1) continue;
        for (const el of n.matches('li.ev') ? [n] : n.querySelectorAll('li.ev')) {
          window.__shown.push([Number(el.dataset.seq), at]);
          if (window.__firstRow === null) window.__firstRow = performance.now();
        }
      }
  }).observe(document, { childList: true, subtree: true });
}

async function signedInContext(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const r = await context.request.post(`${BASE}/console/signin`, { data: { key: KEY } });
  if (!r.ok()) throw new Error(`sign-in: ${r.status()}`);
  return context;
}

/** First paint and the first timeline row, cold: a fresh context (no cache) each run. */
async function firstPaint(browser, url, rowed) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await signedInContext(browser);
    const page = await context.newPage();
    await page.addInitScript(recorder);
    await page.goto(url);
    const fcp = await until(page, 'first contentful paint', () =>
      performance.getEntriesByName('first-contentful-paint')[0]?.startTime);
    const row = rowed ? await until(page, 'the first timeline row', () => window.__firstRow) : null;
    runs.push({ fcp, row });
    await context.close();
  }
  return runs;
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  log(`first paint, ${RUNS} cold runs each`);
  const floor = await firstPaint(browser, `${BASE}/healthz`, false);
  const sessionPage = await firstPaint(browser, `${BASE}/#/sessions/${SESSION}`, true);

  const context = await signedInContext(browser);
  const page = await context.newPage();
  await page.addInitScript(recorder);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  await page.goto(`${BASE}/#/sessions/${SESSION}`);
  await until(page, 'the stream is live', () => document.getElementById('stream-state')?.textContent === 'live' && document.querySelectorAll('li.ev').length > 0);
  const history = await page.evaluate(() => document.querySelectorAll('li.ev').length);

  // The same page, open and live, with nothing happening: the floor of the CPU figures.
  const idleSeconds = 5;
  const idleFrom = await metrics();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const idleTo = await metrics();

  await cdp.send('HeapProfiler.collectGarbage');
  const before = await metrics();
  const t0 = Date.now();
  console.log('ready');
  const [, first, last] = (await lines.next()).value.split(' ').map(Number);
  await until(page, `event ${last} on the timeline`, (seq) => window.__shown.some(([s]) => s === seq), last);
  const wallSeconds = (Date.now() - t0) / 1000;
  const after = await metrics();
  // The heap figures after a collection: what the page holds, not what it has yet to free.
  await cdp.send('HeapProfiler.collectGarbage');
  const kept = await metrics();
  const shown = await page.evaluate(([a, b]) => window.__shown.filter(([s]) => s >= a && s <= b), [first, last]);
  const rows = await page.evaluate(() => document.querySelectorAll('li.ev').length);
  const cpu = (from, to, secs) => ({
    seconds: secs,
    taskShare: (to.TaskDuration - from.TaskDuration) / secs,
    scriptShare: (to.ScriptDuration - from.ScriptDuration) / secs,
    layoutShare: (to.LayoutDuration - from.LayoutDuration) / secs,
    styleShare: (to.RecalcStyleDuration - from.RecalcStyleDuration) / secs,
    layouts: to.LayoutCount - from.LayoutCount,
  });
  console.log('result ' + JSON.stringify({
    firstPaint: { floor, sessionPage },
    historyRows: history,
    rows,
    shown,
    idle: cpu(idleFrom, idleTo, idleSeconds),
    load: cpu(before, after, wallSeconds),
    heap: { beforeBytes: before.JSHeapUsedSize, afterBytes: kept.JSHeapUsedSize, totalAfterBytes: kept.JSHeapTotalSize },
    domNodes: { before: before.Nodes, after: kept.Nodes },
  }));
} catch (e) {
  log(`failed: ${e.stack || e}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  // stdin (the line reader) would keep the process alive.
  process.exit();
}
