// The graph view of a generated 4,000-op function in real VS Code
// (code-server + headless Chromium, software rendering): TOSA: Show Graph,
// then a scripted pan and zoom over the webview, then edits of the file
// (each redraws the graph: a request, the layout in the webview's worker,
// the new picture) while the pan goes on. Reports the longest gap between
// the webview's requestAnimationFrame timestamps in each phase, how many
// frames came over 50 ms late, and when the new picture was there.
// Run by the e2e's run.sh, which sets up code-server and the extension:
//   E2E_SCRIPT=$PWD/bench/graph_webview.js bash test/editors/vscode-e2e/run.sh \
//     editors/vscode build/bin/tosa-lsp OUTDIR
// Prints one JSON line (and "vscode-e2e: 1 passed, 0 failed" for run.sh).
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const puppeteer = require('puppeteer-core');

const URL = process.env.URL, WS = process.env.WORKSPACE;
const FILE = 'big4k.mlir';
const EDITS = +(process.env.EDITS || 3);
const sleep = ms => new Promise(r => setTimeout(r, ms));
const t0 = Date.now();
const log = m => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);

async function poll(page, fn, arg, ms) {
  for (const end = Date.now() + ms; ;) {
    const v = await page.evaluate(fn, arg).catch(() => null);
    if (v || Date.now() > end) return v || null;
    await sleep(250);
  }
}
async function keys(page, mods, key) {
  for (const m of mods) await page.keyboard.down(m);
  await page.keyboard.press(key);
  for (const m of mods.slice().reverse()) await page.keyboard.up(m);
}
async function quickInput(page, mods, key, text) {
  await keys(page, mods, key);
  await poll(page, () => !!document.activeElement?.closest('.quick-input-widget'), null, 10000);
  await page.keyboard.type(text, { delay: 15 });
}
// The webview's frame once its graph is drawn, and the state of the view.
async function graphFrame(page) {
  for (const f of page.frames()) {
    const d = await f.evaluate(() => {
      const c = document.querySelector('#tosa-graph');
      return c && c.dataset.rendered ? { rendered: +c.dataset.rendered, nodes: +c.dataset.nodes, layoutIn: c.dataset.layoutIn } : null;
    }).catch(() => null);
    if (d) return { frame: f, ...d };
  }
  return null;
}
const startFrames = f => f.evaluate(() => {
  window.__frames = [];
  const tick = t => { if (window.__frames) { window.__frames.push(t); requestAnimationFrame(tick); } };
  requestAnimationFrame(tick);
});
const stopFrames = f => f.evaluate(() => {
  const fr = window.__frames, gaps = [];
  window.__frames = null;
  for (let k = 1; k < fr.length; k++) gaps.push(fr[k] - fr[k - 1]);
  return { frames: fr.length, maxGapMs: Math.round(Math.max(0, ...gaps)), over50: gaps.filter(g => g > 50).length };
});
// Drags and wheels the mouse over the webview at (x, y) until `until()`.
async function drive(page, x, y, until) {
  for (let i = 0; !(await until()); i++) {
    await page.mouse.move(x, y);
    await page.mouse.down();
    for (let s = 0; s < 10; s++) await page.mouse.move(x + (i % 2 ? -1 : 1) * s * 12, y + s * 8);
    await page.mouse.up();
    await page.mouse.wheel({ deltaY: i % 2 ? 120 : -120 });
  }
}

// An edit of the file (a new line at the top: every node moves a line
// down, the view gets a new model: the request, the worker's layout, the
// picture) while the mouse pans over the webview at `box` (none: no pan);
// the frames of `frame` meanwhile, until the graph is drawn again and 1 s
// more (without a graph: 3 s).
async function editFrames(page, frame, box, k) {
  await keys(page, ['Control'], 'Digit1');
  await quickInput(page, ['Control'], 'KeyG', '1:1');
  await page.keyboard.press('Enter');
  await sleep(500);
  const before = box ? (await graphFrame(page)).rendered : 0;
  const trace = process.env.TRACE && box && k === 0;
  if (trace)
    await page.tracing.start({ path: process.env.TRACE, categories: ['toplevel', 'disabled-by-default-devtools.timeline', 'devtools.timeline', 'blink.user_timing', 'v8'] });
  await startFrames(frame);
  const edited = Date.now();
  // One key, no completion trigger: the editor's own work stays small.
  await page.keyboard.press('Enter');
  let drawn = 0;
  const done = async () => {
    if (!box) return Date.now() - edited > 3000;
    if (!drawn && ((await graphFrame(page)) || {}).rendered > before) drawn = Date.now();
    return (drawn && Date.now() - drawn > 1000) || Date.now() - edited > 60000;
  };
  if (box) await drive(page, box.x, box.y, done);
  else while (!(await done())) await sleep(100);
  const r = { ...(await stopFrames(frame)), drawnAfterMs: drawn ? drawn - edited : null };
  if (trace) await page.tracing.stop();
  return r;
}

async function main(page) {
  await page.goto(URL, { waitUntil: 'domcontentloaded', timeout: 30000 });
  await poll(page, () => !!document.querySelector('.monaco-workbench .part.editor'), null, 30000);
  await sleep(1000);
  // Opened from the Explorer (a click on its row).
  const row = await poll(page, f => {
    const r = [...document.querySelectorAll('.explorer-folders-view .monaco-list-row')].find(e => e.textContent.trim() === f);
    if (!r) return null;
    const b = r.getBoundingClientRect();
    return { x: b.left + 40, y: b.top + b.height / 2 };
  }, FILE, 20000);
  if (!row) throw new Error(`${FILE} is not in the Explorer`);
  await page.mouse.click(row.x, row.y);
  const opened = await poll(page, () => document.querySelector('.editor-instance .view-lines')?.textContent.includes('func.func'), null, 20000);
  log(`opened ${FILE}: ${!!opened}`);
  await sleep(2000); // the server's first analysis
  // The same edit without the graph: VS Code's own frames (the webview
  // shares the workbench's renderer thread, so its frames wait for this).
  const bare = [];
  for (let k = 0; k < EDITS; k++) bare.push(await editFrames(page, page, null, k));
  // An op of the function (the edits above added lines before it).
  await quickInput(page, ['Control'], 'KeyG', `${3 + EDITS}:5`);
  await page.keyboard.press('Enter');
  const asked = Date.now();
  await quickInput(page, ['Control', 'Shift'], 'KeyP', 'TOSA: Show Graph');
  await sleep(500);
  await page.keyboard.press('Enter');
  let g = null;
  while (!g && Date.now() - asked < 120000) { g = await graphFrame(page); if (!g) await sleep(200); }
  if (!g) throw new Error('no graph within 120 s');
  const out = { nodes: g.nodes, layoutIn: g.layoutIn, shownMs: Date.now() - asked };
  log(`graph shown: ${JSON.stringify(out)}`);
  // The webview's box on the page: the pan happens over its middle.
  const box = await page.evaluate(() => {
    const w = [...document.querySelectorAll('iframe.webview, .webview')].map(e => e.getBoundingClientRect()).find(r => r.width > 100);
    return w && { x: w.left + w.width / 2, y: w.top + w.height / 2 };
  });
  if (!box) throw new Error('no webview on the page');
  await sleep(1000);
  await startFrames(g.frame);
  const until = Date.now() + 4000;
  await drive(page, box.x, box.y, async () => Date.now() >= until);
  out.panZoom = await stopFrames(g.frame);
  out.edits = [];
  for (let k = 0; k < EDITS; k++) {
    out.edits.push(await editFrames(page, g.frame, box, k));
    log(`edit ${k}: ${JSON.stringify(out.edits[k])}`);
  }
  out.editsWithoutGraph = bare;
  return out;
}

(async () => {
  execFileSync('python3', [path.join(__dirname, 'gen.py'), '--lines', '4100', '--shape', 'one', '-o', path.join(WS, FILE)], { stdio: 'ignore' });
  const browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    userDataDir: fs.mkdtempSync(path.join(path.dirname(process.env.CHROMIUM_PID_FILE || '/tmp/x'), 'chromium-')),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--window-size=1400,900'],
    defaultViewport: { width: 1400, height: 900 }, protocolTimeout: 120000,
  });
  if (process.env.CHROMIUM_PID_FILE && browser.process())
    fs.writeFileSync(process.env.CHROMIUM_PID_FILE, String(browser.process().pid));
  let ok = false;
  try {
    const page = await browser.newPage();
    const out = await main(page);
    out.load = require('os').loadavg()[0];
    console.log(JSON.stringify(out));
    ok = true;
  } catch (e) {
    console.error(e && e.stack || e);
    const pages = await browser.pages().catch(() => []);
    if (pages[1] && process.env.OUTDIR)
      await pages[1].screenshot({ path: path.join(process.env.OUTDIR, 'failure-graph-webview.png') }).catch(() => {});
  } finally {
    await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
  }
  console.log(`vscode-e2e: ${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
  process.exit(ok ? 0 : 1);
})();
