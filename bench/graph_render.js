// Times the graph view in headless Chromium (software rendering): opens a
// page written by `tosa-lsp graph --format=html`, and reports when the
// first band of the graph is drawn, when the whole graph is laid out and
// drawn, and the longest gap between animation frames during a scripted
// pan and zoom (during the layout, after it at the first view, and zoomed
// out to the whole graph after "Fit"; then while the graph is laid out
// again: "Expand all" redraws it as an edit does, at the first view's zoom
// and zoomed out).
//   NODE_PATH=test/editors/vscode-e2e/node_modules node bench/graph_render.js PAGE.html [--no-worker]
// --no-worker: a page without Worker (the layout on the page's thread, as
// before the worker). Prints one JSON line.
'use strict';
const path = require('path');
const puppeteer = require('puppeteer-core');

const page_ = process.argv[2];
const noWorker = process.argv.includes('--no-worker');
if (!page_) {
  console.error('usage: node bench/graph_render.js PAGE.html [--no-worker]');
  process.exit(2);
}

// Records rAF timestamps from now on.
function startFrames(page) {
  return page.evaluate(() => {
    window.__frames = [];
    const tick = t => { window.__frames.push(t); if (window.__frames.length < 100000) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
}
// The frames recorded, their longest gap; stops recording.
function stopFrames(page) {
  return page.evaluate(() => {
    const f = window.__frames;
    const gaps = [];
    for (let k = 1; k < f.length; k++) gaps.push(f[k] - f[k - 1]);
    gaps.sort((a, b) => a - b);
    window.__frames = [];
    // The longest gap, and how many frames came over 50 ms late (one
    // outlier on a loaded 2-core host is the scheduler's, many are ours).
    return { frames: f.length, maxGapMs: Math.round(gaps[gaps.length - 1] || 0),
      p99GapMs: Math.round(gaps[Math.floor(gaps.length * 0.99)] || 0), over50: gaps.filter(g => g > 50).length };
  });
}
// Drags and wheels the mouse until `until()` is true.
async function drive(page, until) {
  let i = 0;
  await page.mouse.move(600, 450);
  while (!(await until())) {
    await page.mouse.down();
    for (let s = 0; s < 10; s++) await page.mouse.move(600 + (i % 2 ? -1 : 1) * s * 15, 450 + s * 10);
    await page.mouse.up();
    await page.mouse.wheel({ deltaY: i % 2 ? 120 : -120 });
    i++;
  }
}
// Pans and zooms with the mouse for `ms`, recording rAF timestamps.
async function panZoom(page, ms) {
  await startFrames(page);
  const end = Date.now() + ms;
  await drive(page, async () => Date.now() >= end);
  return stopFrames(page);
}

// Lays the graph out again ("Expand all" redraws the same model, as an
// edit does) while the user pans, until it is drawn (the `n`-th picture)
// and 1 s more; the frames meanwhile, which thread laid it out.
async function relayoutWhilePanning(page, n) {
  await startFrames(page);
  const t0 = Date.now();
  await page.click('button[data-act="expand"]');
  let drawn = 0;
  await drive(page, async () => {
    if (!drawn && (await page.evaluate(() => document.querySelector('#tosa-graph').dataset.rendered)) === String(n)) drawn = Date.now();
    return (drawn && Date.now() - drawn > 1000) || Date.now() - t0 > 120000;
  });
  const frames = await stopFrames(page);
  const layoutIn = await page.evaluate(() => document.querySelector('#tosa-graph').dataset.layoutIn);
  return { ...frames, drawnAfterMs: drawn - t0, layoutIn };
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1200,900'],
    defaultViewport: { width: 1200, height: 900 }, protocolTimeout: 300000,
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    if (noWorker) await page.evaluateOnNewDocument(() => { delete window.Worker; });
    await page.goto('file://' + path.resolve(page_), { waitUntil: 'domcontentloaded', timeout: 120000 });
    await page.waitForFunction(() => document.querySelector('#tosa-graph').dataset.firstBandAt, { timeout: 300000, polling: 50 });
    const during = await panZoom(page, 3000);
    await page.waitForFunction(() => document.querySelector('#tosa-graph').dataset.renderedAt, { timeout: 600000, polling: 100 });
    const after = await panZoom(page, 5000);
    const r = await page.evaluate(() => {
      const c = document.querySelector('#tosa-graph');
      return {
        firstBandMs: +c.dataset.firstBandAt, allMs: +c.dataset.renderedAt, layoutMs: +c.dataset.layoutMs, layoutIn: c.dataset.layoutIn,
        // Laid out, and in the document at the first view (bands on screen).
        nodes: +c.dataset.nodes, domNodes: c.querySelectorAll('g.node').length, bands: c.querySelectorAll('g.band').length,
      };
    });
    // Laid out again (as after an edit) while the user pans where the
    // text is readable: the new picture's bands are built as it pans.
    const nearRelayout = await relayoutWhilePanning(page, 2);
    // Zoomed out to the whole graph (a big one: the canvas sketch).
    await page.click('button[data-act="fit"]');
    const fit = await panZoom(page, 3000);
    // The same zoomed out: "Expand all" redraws the same model.
    await page.click('button[data-act="fit"]');
    const relayout = await relayoutWhilePanning(page, 3);
    console.log(JSON.stringify({ page: path.basename(page_), worker: !noWorker, ...r, panZoomDuringLayout: during, panZoomAfter: after,
      panZoomFit: fit, panZoomRelayout: relayout, panZoomRelayoutNear: nearRelayout, errors }));
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(e); process.exit(1); });
