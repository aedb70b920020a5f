// Drives code-server (VS Code 1.100 in the browser) with headless Chromium
// through puppeteer-core; run by run.sh with URL, OUTDIR, CHROMIUM_PID_FILE.
// Checks: hover on tosa.add, inlay hint " inferred: ...", a diagnostic in the
// Problems panel, and "TOSA: Preview Lowering" showing linalg.generic.
'use strict';
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const URL = process.env.URL;
const OUTDIR = process.env.OUTDIR;
const TOTAL_TIMEOUT_MS = 180000;
const FILE = 'example.mlir';
// The error the server reports on the bad tosa.sub (from mlir-opt's verifier).
const DIAG_TEXT = "result type '4x3' not broadcast compatible";

let passed = 0, failed = 0;
const t0 = Date.now();
function log(msg) { console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`); }
function check(cond, what, detail) {
  if (cond) { passed++; console.log(`PASS: ${what}`); }
  else { failed++; console.log(`FAIL: ${what}${detail !== undefined ? ` -- ${String(detail).slice(0, 400)}` : ''}`); }
}
function finish(code) {
  console.log(`vscode-e2e: ${passed} passed, ${failed} failed`);
  process.exit(code ?? (failed === 0 && passed > 0 ? 0 : 1));
}
const sleep = ms => new Promise(r => setTimeout(r, ms));

setTimeout(() => { log('overall timeout'); failed++; finish(1); }, TOTAL_TIMEOUT_MS).unref();

// Polls fn() (in the page) until it returns a truthy value; returns it or null.
async function poll(page, fn, arg, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.evaluate(fn, arg).catch(() => null);
    if (v || Date.now() > end) return v || null;
    await sleep(250);
  }
}

// Screen rectangle of `needle` (plus `from` characters) in the first visible
// editor line containing it, found through the line's text nodes (the
// TextMate tokens split it over spans). Runs in the page.
function locate({ needle, from, editorIndex }) {
  const editors = [...document.querySelectorAll('.editor-instance .monaco-editor')];
  const ed = editors[editorIndex ?? 0];
  if (!ed) return null;
  for (const line of ed.querySelectorAll('.view-lines .view-line')) {
    const text = line.textContent.replace(/\u00a0/g, ' ');
    const i = text.indexOf(needle);
    if (i < 0) continue;
    const want = i + (from || 0);
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    let off = 0, node;
    while ((node = walker.nextNode())) {
      const len = node.textContent.length;
      if (want < off + len) {
        const r = document.createRange();
        r.setStart(node, want - off); r.setEnd(node, want - off + 1);
        const b = r.getBoundingClientRect();
        return { x: b.left + b.width / 2, y: b.top + b.height / 2 };
      }
      off += len;
    }
  }
  return null;
}

async function quickInput(page, keys, text) {
  await page.keyboard.down('Control'); if (keys.shift) await page.keyboard.down('Shift');
  await page.keyboard.press(keys.key);
  if (keys.shift) await page.keyboard.up('Shift'); await page.keyboard.up('Control');
  const ok = await poll(page, () => {
    const w = document.querySelector('.quick-input-widget');
    return w && w.style.display !== 'none' && document.activeElement &&
      document.activeElement.closest('.quick-input-widget') ? true : null;
  }, null, 10000);
  if (!ok) return false;
  await page.keyboard.type(text, { delay: 15 });
  return true;
}

// Items shown by the quick input (labels), or null when it is hidden.
function quickItems() {
  const w = document.querySelector('.quick-input-widget');
  if (!w || w.style.display === 'none') return null;
  return [...w.querySelectorAll('.monaco-list-row')].map(r => r.textContent.replace(/\s+/g, ' ').trim());
}

(async () => {
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      userDataDir: fs.mkdtempSync(path.join(path.dirname(process.env.CHROMIUM_PID_FILE || '/tmp/x'), 'chromium-')),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage', '--window-size=1400,900'],
      defaultViewport: { width: 1400, height: 900 },
      protocolTimeout: 60000,
    });
    if (process.env.CHROMIUM_PID_FILE && browser.process())
      fs.writeFileSync(process.env.CHROMIUM_PID_FILE, String(browser.process().pid));
    const page = await browser.newPage();
    page.on('pageerror', e => log(`pageerror: ${e.message}`));
    await page.goto(URL, { waitUntil: 'domcontentloaded', timeout: 30000 });

    // 0. Workbench, explorer showing the workspace file.
    const wb = await poll(page, f => !!document.querySelector('.monaco-workbench .part.editor') &&
      document.body.textContent.includes(f), FILE, 30000);
    check(wb, 'workbench loaded with the workspace folder');
    if (!wb) { await page.screenshot({ path: path.join(OUTDIR, 'failure-workbench.png') }); finish(1); }
    log('workbench loaded');
    await sleep(1000);

    // Open the file through Quick Open (Ctrl+P).
    let opened = null;
    for (let attempt = 0; attempt < 3 && !opened; attempt++) {
      if (await quickInput(page, { key: 'KeyP' }, FILE)) {
        await poll(page, f => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
          .some(r => r.textContent.includes(f)), FILE, 5000);
        await page.keyboard.press('Enter');
      }
      log(`quick open attempt ${attempt + 1}`);
      opened = await poll(page, () => {
        const tab = document.querySelector('.tabs-container .tab.active');
        return tab && tab.textContent.includes('example.mlir') &&
          document.querySelector('.editor-instance .view-lines')?.textContent.includes('tosa.add') ? true : null;
      }, null, 10000);
    }
    check(opened, 'Quick Open opens example.mlir in an editor');
    if (!opened) { await page.screenshot({ path: path.join(OUTDIR, 'failure-open.png') }); finish(1); }
    log('file opened');

    // 1. Hover on the tosa.add op name (retried: the server may still be starting).
    let hover = null;
    for (let attempt = 0; attempt < 10 && !hover; attempt++) {
      const at = await page.evaluate(locate, { needle: 'tosa.add', from: 5 });
      if (!at) { await sleep(500); continue; }
      await page.mouse.move(at.x + 200, at.y + 200);
      await sleep(200);
      await page.mouse.move(at.x, at.y, { steps: 3 });
      hover = await poll(page, () => {
        for (const h of document.querySelectorAll('.monaco-hover, .monaco-resizable-hover')) {
          const t = h.textContent || '';
          if (h.offsetParent !== null && t.includes('Inferred') && t.includes('declared')) return t;
        }
        return null;
      }, null, 3000);
    }
    check(hover, 'hover on tosa.add shows "Inferred ... declared"', hover);
    if (hover) log(`hover: ${hover.replace(/\s+/g, ' ').slice(0, 160)}`);
    await sleep(500);  // let the hover's fade-in finish before the screenshot
    await page.screenshot({ path: path.join(OUTDIR, 'hover.png') });
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');

    // 2. Inlay hints (" inferred: 5x7" after the refinable result type).
    // Inlay hints are injected text: spans outside the line's tokens with a
    // generated class (ced-*); comments cannot match "inferred:" (none in the file).
    const hint = await poll(page, () => {
      const found = [];
      for (const s of document.querySelectorAll('.editor-instance .view-lines .view-line span')) {
        const t = s.textContent.replace(/\u00a0/g, ' ');
        if (s.children.length === 0 && /inferred:/.test(t)) found.push({ text: t.trim(), cls: s.className });
      }
      return found.length ? found : null;
    }, null, 20000);
    check(hint && hint.some(h => h.text === 'inferred: 5x7'), 'inlay hint "inferred: 5x7" rendered', JSON.stringify(hint));
    if (hint) log(`inlay hints: ${JSON.stringify(hint)}`);
    await page.screenshot({ path: path.join(OUTDIR, 'inlay-hints.png') });

    // 3. Problems panel (Ctrl+Shift+M).
    await page.keyboard.down('Control'); await page.keyboard.down('Shift');
    await page.keyboard.press('KeyM');
    await page.keyboard.up('Shift'); await page.keyboard.up('Control');
    const problem = await poll(page, d => {
      const p = document.querySelector('.markers-panel');
      if (!p || p.offsetParent === null) return null;
      const rows = [...p.querySelectorAll('.monaco-list-row')].map(r => r.textContent);
      return rows.find(t => t.includes(d)) || null;
    }, DIAG_TEXT, 20000);
    check(problem, `Problems panel lists "${DIAG_TEXT}"`, problem);
    if (problem) log(`problem: ${problem.slice(0, 200)}`);
    await page.screenshot({ path: path.join(OUTDIR, 'problems.png') });

    // 4. Quick fix (Ctrl+.) on the bad tosa.sub: the lowering preview needs a
    // file that verifies, so fix it first; the diagnostic must go away.
    const src = fs.readFileSync(path.join(process.env.WORKSPACE, FILE), 'utf8').split('\n');
    const lineOf = needle => src.findIndex(l => l.includes(needle)) + 1;
    const colOf = needle => src[lineOf(needle) - 1].indexOf(needle) + 3;
    const goTo = async (line, col) => {
      await page.keyboard.down('Control'); await page.keyboard.press('Digit1'); await page.keyboard.up('Control');
      await sleep(300);
      if (await quickInput(page, { key: 'KeyG' }, `${line}:${col}`)) { await sleep(200); await page.keyboard.press('Enter'); }
      return poll(page, want => (document.querySelector('.statusbar')?.textContent || '').includes(want),
        `Ln ${line}, Col ${col}`, 5000);
    };
    await goTo(lineOf('tosa.sub'), colOf('tosa.sub'));
    await page.keyboard.down('Control'); await page.keyboard.press('Period'); await page.keyboard.up('Control');
    const fixes = await poll(page, () => {
      const rows = [...document.querySelectorAll('.action-widget .monaco-list-row')].map(r => r.textContent);
      return rows.length ? rows : null;
    }, null, 10000);
    const fixIdx = (fixes || []).findIndex(t => t.includes('Change result type to tensor<1x3xf32>'));
    if (fixIdx >= 0) {
      await page.screenshot({ path: path.join(OUTDIR, 'quickfix.png') });
      await page.evaluate(i => {
        const rows = [...document.querySelectorAll('.action-widget .monaco-list-row')]
          .filter(r => r.textContent.includes('Change result type to tensor<1x3xf32>'));
        rows[0].dispatchEvent(new MouseEvent('mousemove', { bubbles: true }));
      }, fixIdx);
      const row = await page.$$('.action-widget .monaco-list-row');
      for (const r of row) {
        if ((await r.evaluate(e => e.textContent)).includes('Change result type to tensor<1x3xf32>')) { await r.click(); break; }
      }
    } else {
      await page.keyboard.press('Escape');
    }
    const fixed = await poll(page, () => {
      const lines = [...document.querySelectorAll('.editor-instance .view-line')].map(l => l.textContent.replace(/\u00a0/g, ' '));
      const sub = lines.find(l => l.includes('tosa.sub'));
      const p = document.querySelector('.markers-panel');
      const rows = p ? p.querySelectorAll('.monaco-list-row').length : -1;
      return sub && sub.includes('-> tensor<1x3xf32>') && rows === 0 ? sub : null;
    }, null, 15000);
    check(fixed, 'quick fix "Change result type to tensor<1x3xf32>" applied; Problems panel empty',
      JSON.stringify(fixes));

    // 5. TOSA: Preview Lowering, with the cursor inside @broadcast_add.
    // Cursor inside @broadcast_add: the preview lowers that function.
    log(`cursor on tosa.add: ${!!(await goTo(lineOf('tosa.add'), colOf('tosa.add')))}`);
    let ran = false;
    if (await quickInput(page, { key: 'KeyP', shift: true }, 'TOSA: Preview Lowering')) {
      await poll(page, () => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
        .some(r => r.textContent.includes('Preview Lowering')), null, 5000);
      await page.keyboard.press('Enter');
      ran = true;
    }
    // Stage and mode pickers (if any): choose linalg, then upstream.
    const picked = [];
    for (const [want, other] of [['linalg', 'loops'], ['upstream', 'versioned']]) {
      const items = await poll(page, ([a, b]) => {
        const w = document.querySelector('.quick-input-widget');
        if (!w || w.style.display === 'none') return null;
        const rows = [...w.querySelectorAll('.monaco-list-row')].map(r => r.textContent);
        return rows.some(t => t.includes(a)) && rows.some(t => t.includes(b)) ? rows : null;
      }, [want, other], 5000);
      if (!items) continue;
      await page.keyboard.type(want, { delay: 15 });
      await sleep(200);
      await page.keyboard.press('Enter');
      picked.push(want);
      await sleep(300);
    }
    log(`preview command ran=${ran} picked=${picked.join(',')}`);
    const preview = await poll(page, () => {
      for (const ed of document.querySelectorAll('.editor-instance .monaco-editor')) {
        const t = ed.querySelector('.view-lines')?.textContent || '';
        if (t.includes('linalg.generic')) return t.replace(/\u00a0/g, ' ').slice(0, 300);
      }
      return null;
    }, null, 30000);
    check(preview, 'TOSA: Preview Lowering opens an editor with linalg.generic', `ran=${ran} picked=${picked}`);
    const tabs = await page.evaluate(() =>
      [...document.querySelectorAll('.tabs-container .tab')].map(t => t.textContent.trim()));
    log(`tabs: ${JSON.stringify(tabs)}`);
    await page.screenshot({ path: path.join(OUTDIR, 'preview.png') });
  } catch (e) {
    failed++;
    console.log(`FAIL: exception: ${e && e.stack || e}`);
  } finally {
    if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
  }
  finish();
})();
