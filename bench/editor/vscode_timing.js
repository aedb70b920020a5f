#!/usr/bin/env node
// Editor-side timing in VS Code (code-server 4.100.3 = VS Code 1.100.3 in
// headless Debian Chromium, driven by puppeteer-core: the e2e harness of
// test/editors/vscode-e2e), with the project's extension as the client of
// tosa-lsp and of mlir-lsp-server-22 (tosaLsp.serverPath pointing at it),
// interleaved in one run; medians per server.
//
//   node bench/editor/vscode_timing.js [--size 50k] [--shape multi] [--runs 3] [--edits 5]
//        [--tosa-lsp build/bin/tosa-lsp] [--upstream /usr/bin/mlir-lsp-server-22]
//        [--vsix editors/vscode] [--out bench/inputs/vscode-results.json] [--edit-kind verifier|parse]
//        [--servers tosa-lsp,mlir-lsp-server-22]
//   VSCODE_TIMING_TRACE=1: logs, per edit, what the client did until the
//   squiggle (didChange sent, publish handled, requests asked and answered).
//
// Input and edit: bench/editor/run.py's (gen.py's seeded file, verified with
// mlir-opt-22; the typed character is a digit before a static result dim of
// a unary op in the middle function, which mlir-opt-22 rejects).
// Per session (a fresh code-server, browser and server):
//   open_publish_ms  Enter in Quick Open -> the extension handles the first
//                    publish (TOSA_LSP_VSCODE_TIMING_LOG; a clean file draws
//                    nothing, so this is the "shown" time)
//   open_text_ms     -> the file's text is drawn (VS Code loading the file)
//   open_didopen_ms  -> the client sends didOpen (includes activating the
//                    extension and starting the server: the first .mlir file)
//   didopen_publish_ms  didOpen -> the first publish handled
//   open_hints_ms    -> the first inlay hint is drawn (tosa-lsp only)
//   edit_drawn_ms    the typed character -> its error squiggle drawn (median of --edits)
//   edit_publish_ms  the typed character -> the extension handles the publish with it
//   stall_open_ms    longest lateness of a 20 ms setInterval in the workbench
//                    page, from the open until 2 s after the publish
//   stall_edit_ms    the same from each typed character until 1 s after its
//                    squiggle (max over the edits)
// Prerequisites: bash test/editors/vscode-e2e/setup.sh, editors/vscode/build.sh.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const E2E = path.join(ROOT, 'test', 'editors', 'vscode-e2e');
const puppeteer = require(path.join(E2E, 'node_modules', 'puppeteer-core'));

function args() {
  const a = {
    size: '50k', shape: 'multi', runs: 3, edits: 5, editKind: 'verifier', servers: 'tosa-lsp,mlir-lsp-server-22',
    tosaLsp: path.join(ROOT, 'build', 'bin', 'tosa-lsp'), upstream: '/usr/bin/mlir-lsp-server-22',
    vsix: path.join(ROOT, 'editors', 'vscode'), out: path.join(ROOT, 'bench', 'inputs', 'vscode-results.json'),
  };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const k = v[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!(k in a) || v[i + 1] === undefined) { console.error(`unknown or incomplete option ${v[i]}`); process.exit(2); }
    a[k] = typeof a[k] === 'number' ? Number(v[i + 1]) : v[i + 1];
  }
  if (fs.statSync(a.vsix).isDirectory()) {
    const f = fs.readdirSync(a.vsix).filter(n => /^tosa-lsp-.*\.vsix$/.test(n));
    if (!f.length) { console.error(`no tosa-lsp-*.vsix in ${a.vsix}`); process.exit(2); }
    a.vsix = path.join(a.vsix, f[0]);
  }
  return a;
}

const sleep = ms => new Promise(r => setTimeout(r, ms));
const t0 = Date.now();
const log = m => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);
const median = xs => { const s = xs.filter(x => typeof x === 'number').sort((p, q) => p - q); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null; };

// The input and the edit, from bench/editor/run.py (same as Neovim/Vim).
function makeInput(a) {
  const py = `
import json, sys, types
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'bench', 'editor'))})
import run
ns = types.SimpleNamespace(inputs=${JSON.stringify(path.join(ROOT, 'bench', 'inputs'))}, seed=1,
                           mlir_opt='mlir-opt-22', timeout=300, edit_kind=${JSON.stringify(a.editKind)})
p, e = run.make_input(ns, ${JSON.stringify(a.size)}, ${JSON.stringify(a.shape)})
print(json.dumps({"path": p, "edit": e}))`;
  return JSON.parse(cp.execFileSync('python3', ['-c', py], { encoding: 'utf8', maxBuffer: 1 << 26 }));
}

async function poll(fn, timeoutMs, every = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v || Date.now() > end) return v || null;
    await sleep(every);
  }
}

async function keys(page, combo) {
  const parts = combo.split('+');
  for (const k of parts.slice(0, -1)) await page.keyboard.down(k);
  await page.keyboard.press(parts[parts.length - 1]);
  for (const k of parts.slice(0, -1).reverse()) await page.keyboard.up(k);
}

async function quickInput(page, combo, text) {
  await keys(page, combo);
  const ok = await poll(() => page.evaluate(() => {
    const w = document.querySelector('.quick-input-widget');
    return !!(w && w.style.display !== 'none' && document.activeElement?.closest('.quick-input-widget'));
  }), 10000);
  if (!ok) return false;
  await page.keyboard.type(text, { delay: 10 });
  return true;
}

// In the page: resolves with Date.now() at the first animation frame where
// `kind` holds (or null after `ms`).
function watch(page, kind, ms) {
  return page.evaluate((kind, ms) => new Promise(resolve => {
    const end = Date.now() + ms;
    const ed = () => document.querySelector('.editor-group-container.active .editor-instance .monaco-editor');
    const test = {
      text: () => (ed()?.querySelector('.view-lines')?.textContent || '').includes('func.func'),
      hint: () => [...(ed()?.querySelectorAll('.view-lines .view-line span') || [])]
        .some(s => s.children.length === 0 && /inferred:|runtime-check/.test(s.textContent)),
      squiggle: () => !!ed()?.querySelector('.view-overlays .squiggly-error'),
      noSquiggle: () => !!ed() && !ed().querySelector('.view-overlays .squiggly-error'),
    }[kind];
    const tick = () => {
      if (test()) return resolve(Date.now());
      if (Date.now() > end) return resolve(null);
      requestAnimationFrame(tick);
    };
    tick();
  }), kind, ms).catch(() => null);  // the page may close first
}

function readLog(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l));
  } catch { return []; }
}

async function session(a, input, server, n, tmp, ext) {
  const dir = fs.mkdtempSync(path.join(tmp, `${server}-`));
  const udd = path.join(dir, 'user-data'), ws = path.join(dir, 'ws'), tlog = path.join(dir, 'timing.jsonl');
  fs.mkdirSync(path.join(udd, 'User'), { recursive: true });
  fs.mkdirSync(path.join(udd, 'Machine'), { recursive: true });
  fs.mkdirSync(ws);
  const file = path.basename(input.path);
  fs.copyFileSync(input.path, path.join(ws, file));
  const settings = JSON.stringify({
    'tosaLsp.serverPath': server === 'tosa-lsp' ? a.tosaLsp : a.upstream,
    'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none', 'workbench.tips.enabled': false,
    'telemetry.telemetryLevel': 'off', 'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true, 'update.mode': 'none', 'window.restoreWindows': 'none',
    'editor.inlayHints.enabled': 'on', 'editor.minimap.enabled': false, 'chat.commandCenter.enabled': false,
    'files.hotExit': 'off', 'workbench.enableExperiments': false,
  }, null, 2);
  fs.writeFileSync(path.join(udd, 'User', 'settings.json'), settings);
  fs.writeFileSync(path.join(udd, 'Machine', 'settings.json'), settings);
  fs.writeFileSync(path.join(dir, 'config.yaml'), 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const csLog = fs.openSync(path.join(dir, 'code-server.log'), 'w');
  const env = { ...process.env, TOSA_LSP_VSCODE_TIMING_LOG: tlog, XDG_CONFIG_HOME: path.join(dir, 'xdg-config'),
    XDG_DATA_HOME: path.join(dir, 'xdg-data'), XDG_CACHE_HOME: path.join(dir, 'xdg-cache') };
  const cs = cp.spawn(path.join(E2E, 'node_modules', '.bin', 'code-server'),
    ['--config', path.join(dir, 'config.yaml'), '--user-data-dir', udd, '--extensions-dir', ext,
     '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
     '--disable-workspace-trust', '--disable-getting-started-override', ws],
    { env, detached: true, stdio: ['ignore', csLog, csLog] });
  const killGroup = () => { try { process.kill(-cs.pid, 'SIGKILL'); } catch { /* gone */ } };
  process.once('exit', killGroup);
  let browser;
  const r = { server, run: n };
  try {
    const up = await poll(() => fetch(`http://127.0.0.1:${port}/healthz`).then(x => x.status < 500), 60000, 250);
    if (!up) throw new Error('code-server did not start');
    browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium', headless: true, userDataDir: path.join(dir, 'chromium'),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--window-size=1400,900'],
      defaultViewport: { width: 1400, height: 900 }, protocolTimeout: 180000,
    });
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
    const wb = await poll(() => page.evaluate(f => !!document.querySelector('.monaco-workbench .part.editor') &&
      document.body.textContent.includes(f), file), 60000, 250);
    if (!wb) throw new Error('workbench did not load');
    await sleep(2000);
    // The stall monitor: lateness of a 20 ms timer, with the time it ended.
    await page.evaluate(() => {
      window.__stalls = [];
      let last = performance.now();
      setInterval(() => {
        const now = performance.now();
        if (now - last - 20 > 5) window.__stalls.push([Date.now(), now - last - 20]);
        last = now;
      }, 20);
    });
    const stallIn = async (from, to) => Math.round(Math.max(0, ...(await page.evaluate(() => window.__stalls))
      .filter(([t, late]) => t >= from && t - late <= to).map(([, late]) => late)));
    // Open.
    if (!await quickInput(page, 'Control+KeyP', file)) throw new Error('Quick Open did not open');
    await poll(() => page.evaluate(f => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
      .some(x => x.textContent.includes(f)), file), 10000);
    const text = watch(page, 'text', 120000);
    const hint = watch(page, 'hint', 120000);
    const tOpen = Date.now();
    await page.keyboard.press('Enter');
    const publish = await poll(async () => readLog(tlog).find(e => e.event === 'publish' && e.uri.endsWith(file)), 180000);
    if (!publish) throw new Error('no publish for the file');
    r.open_publish_ms = publish.t - tOpen;
    const events = readLog(tlog);
    if (process.env.VSCODE_TIMING_TRACE)
      log(`open: ${events.map(x => `${x.event}@+${x.t - tOpen}`).join(' ')}`);
    const at = name => events.find(e => e.event === name);
    if (at('activate')) r.open_activate_ms = at('activate').t - tOpen;  // the extension's activate() runs
    if (at('started')) r.open_started_ms = at('started').t - tOpen;  // the server answered initialize
    const didOpen = events.find(e => e.event === 'didOpen' && e.uri.endsWith(file));
    if (didOpen) {
      r.open_didopen_ms = didOpen.t - tOpen;  // VS Code loading the file, activating the extension, starting the server
      r.didopen_publish_ms = publish.t - didOpen.t;
    }
    r.open_publish_diagnostics = publish.diagnostics;
    const tText = await text;
    r.open_text_ms = tText && tText - tOpen;
    if (server === 'tosa-lsp') {
      const tHint = await hint;
      r.open_hints_ms = tHint && tHint - tOpen;
    }
    await sleep(2000);
    r.stall_open_ms = await stallIn(tOpen, Math.max(publish.t, r.open_hints_ms ? tOpen + r.open_hints_ms : 0) + 2000);
    // Edits: the typed character, its squiggle, undo, its squiggle gone.
    const e = input.edit;
    const edits = [], pubs = [], stalls = [];
    for (let i = 0; i < a.edits; i++) {
      await keys(page, 'Control+Digit1');
      if (await quickInput(page, 'Control+KeyG', `${e.line + 1}:${e.col + 1}`)) { await sleep(200); await page.keyboard.press('Enter'); }
      const at = await poll(() => page.evaluate(want => (document.querySelector('.statusbar')?.textContent || '').includes(want),
        `Ln ${e.line + 1}, Col ${e.col + 1}`), 10000);
      if (!at) throw new Error('could not put the cursor on the edit');
      await sleep(1500);  // hints of the new screen, a quiet UI
      const squiggle = watch(page, 'squiggle', 60000);
      const tType = Date.now();
      await page.keyboard.type(e.text);
      const tDrawn = await squiggle;
      if (!tDrawn) throw new Error(`edit ${i}: no error squiggle within 60 s`);
      edits.push(tDrawn - tType);
      if (process.env.VSCODE_TIMING_TRACE)  // what the client did meanwhile
        log(`edit ${i}: drawn +${tDrawn - tType} ms; ` + readLog(tlog).filter(x => x.t >= tType - 50 && x.t <= tDrawn + 200)
          .map(x => `${x.event}@+${x.t - tType}`).join(' '));
      const p = await poll(async () => readLog(tlog).find(x => x.event === 'publish' && x.t >= tType && x.diagnostics > 0), 10000);
      if (p) pubs.push(p.t - tType);
      await sleep(1000);
      stalls.push(await stallIn(tType, tDrawn + 1000));
      const gone = watch(page, 'noSquiggle', 60000);
      await keys(page, 'Control+KeyZ');
      if (!await gone) throw new Error(`edit ${i}: the squiggle stayed after undo`);
      await sleep(1000);
    }
    r.edit_drawn_ms = median(edits);
    r.edit_drawn_all = edits;
    r.edit_publish_ms = median(pubs);
    r.stall_edit_ms = Math.max(...stalls);
    r.timing_log = readLog(tlog).length;
  } catch (err) {
    r.error = String(err && err.message || err);
  } finally {
    if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
    try { process.kill(-cs.pid, 'SIGTERM'); } catch { /* gone */ }
    await sleep(500);
    killGroup();
    process.removeListener('exit', killGroup);
    fs.closeSync(csLog);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return r;
}

(async () => {
  const a = args();
  log(`input ${a.shape}-${a.size} (bench/editor/run.py's make_input)`);
  const input = makeInput(a);
  log(`${input.path}; edit at line ${input.edit.line + 1}: ${input.edit.after.trim().slice(0, 100)}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-timing-'));
  // A copy of the server: a rebuild during the run must not change or remove it.
  const copy = path.join(tmp, 'tosa-lsp');
  fs.copyFileSync(a.tosaLsp, copy);
  fs.chmodSync(copy, 0o755);
  log(`tosa-lsp: ${a.tosaLsp} (${fs.statSync(a.tosaLsp).mtime.toISOString()}), copied to ${copy}`);
  a.tosaLspUsed = a.tosaLsp;
  a.tosaLsp = copy;
  const ext = path.join(tmp, 'extensions');
  cp.execFileSync(path.join(E2E, 'node_modules', '.bin', 'code-server'),
    ['--extensions-dir', ext, '--user-data-dir', path.join(tmp, 'ud'), '--install-extension', a.vsix],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'xdg') } });
  const runs = [];
  for (let n = 0; n < a.runs; n++) {
    // Interleaved, the order alternating from run to run.
    const servers = a.servers.split(',');
    for (const server of n % 2 ? servers.slice().reverse() : servers) {
      log(`run ${n + 1}/${a.runs}: ${server} (load ${os.loadavg().map(x => x.toFixed(2)).join(' ')})`);
      const r = await session(a, input, server, n, tmp, ext);
      log(JSON.stringify(r));
      runs.push(r);
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  const keysOut = ['open_text_ms', 'open_activate_ms', 'open_started_ms', 'open_didopen_ms', 'didopen_publish_ms', 'open_publish_ms', 'open_hints_ms', 'edit_drawn_ms', 'edit_publish_ms', 'stall_open_ms', 'stall_edit_ms'];
  const summary = {};
  for (const server of ['tosa-lsp', 'mlir-lsp-server-22']) {
    const ok = runs.filter(r => r.server === server && !r.error);
    summary[server] = Object.fromEntries(keysOut.map(k => [k, median(ok.map(r => r[k]))]));
    summary[server].runs = ok.length;
    summary[server].errors = runs.filter(r => r.server === server && r.error).map(r => r.error);
  }
  const result = { date: new Date().toISOString(), host: `${os.cpus().length} cores, ${os.cpus()[0]?.model}`,
    input: path.basename(input.path), edit: input.edit.after.trim(), args: a, summary, runs };
  fs.writeFileSync(a.out, JSON.stringify(result, null, 2) + '\n');
  const fmt = v => (v === null || v === undefined ? '–' : String(Math.round(v)));
  const ratio = k => (summary['tosa-lsp'][k] && summary['mlir-lsp-server-22'][k]
    ? (summary['tosa-lsp'][k] / summary['mlir-lsp-server-22'][k]).toFixed(2) + '×' : '–');
  const labels = {
    open_text_ms: 'open → text drawn (VS Code loading the file)',
    open_activate_ms: 'open → the extension activated', open_started_ms: 'open → the server initialized',
    open_didopen_ms: 'open → didOpen sent',
    didopen_publish_ms: 'didOpen sent → first publish handled',
    open_publish_ms: 'open → first publish handled by the extension',
    open_hints_ms: 'open → first inlay hint drawn', edit_drawn_ms: 'typed character → its error squiggle drawn',
    edit_publish_ms: 'typed character → publish handled by the extension', stall_open_ms: 'longest UI stall, open',
    stall_edit_ms: 'longest UI stall, after the edit',
  };
  console.log(`VS Code 1.100.3 (code-server) + the extension, ${result.input}, ${a.runs} interleaved runs, medians (ms)\n`);
  console.log('| | tosa-lsp | mlir-lsp-server-22 | ratio |\n|---|---|---|---|');
  for (const k of keysOut)
    console.log(`| ${labels[k]} | ${fmt(summary['tosa-lsp'][k])} | ${fmt(summary['mlir-lsp-server-22'][k])} | ${ratio(k)} |`);
  const failed = runs.filter(r => r.error);
  if (failed.length) console.log(`\n${failed.length} session(s) failed: ${failed.map(r => `${r.server}: ${r.error}`).join('; ')}`);
  process.exit(failed.length ? 1 : 0);
})();
