// Drives code-server (VS Code 1.100 in the browser) with headless Chromium
// through puppeteer-core; run by run.sh with URL, OUTDIR, CHROMIUM_PID_FILE.
// Checks: hover on tosa.add, inlay hint " inferred: ...", a diagnostic in the
// Problems panel, a quick fix, "TOSA: Preview Lowering" showing
// linalg.generic; the whole-file rewrites ("Migrate this file" from Ctrl+.,
// "TOSA: Refine All Shapes in Function" from the palette) open a review diff
// and apply only on Apply (and not after the source changed); a clean
// 10k-line file (many.mlir, made by run.sh) leaves Problems empty while its
// inlay hints show the refined shapes.
'use strict';
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const URL = process.env.URL;
const OUTDIR = process.env.OUTDIR;
const TOTAL_TIMEOUT_MS = 480000;
const FILE = 'example.mlir';
// The error the server reports on the bad tosa.sub (from mlir-opt's verifier).
const DIAG_TEXT = "result type '4x3' not broadcast compatible";

let passed = 0, failed = 0;
const t0 = Date.now();
function log(msg) { console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`); }
function check(cond, what, detail) {
  if (cond) { passed++; console.log(`PASS: ${what}`); }
  else {
    failed++;
    const line = `FAIL: ${what}${detail !== undefined ? ` -- ${String(detail).slice(0, 400)}` : ''}`;
    console.log(line);
    log(line); // also on stderr, which lit prints whole (FileCheck's dump elides)
  }
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

// Runs a palette command by its title (Ctrl+Shift+P, type, Enter on the row).
async function runCommand(page, title) {
  if (!await quickInput(page, { key: 'KeyP', shift: true }, title)) return false;
  const row = await poll(page, t => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
    .some(r => r.textContent.includes(t)), title, 5000);
  await page.keyboard.press('Enter');
  return !!row;
}

// Opens a workspace file through Quick Open; resolves when its editor shows `needle`.
async function openFile(page, file, needle) {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await quickInput(page, { key: 'KeyP' }, file)) {
      // The file's own row: a review of it open in another tab is listed
      // too, first when it was the last editor used.
      const row = await poll(page, f => {
        const i = [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
          .findIndex(r => r.textContent.includes(f) && !r.textContent.includes('review'));
        return i < 0 ? null : i + 1;
      }, file, 5000);
      for (let i = 1; i < (row || 1); i++) await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
    }
    const ok = await poll(page, ([f, n]) => {
      const tab = document.querySelector('.tabs-container .tab.active');
      const ed = document.querySelector('.editor-group-container.active .editor-instance .view-lines');
      return tab && tab.textContent.includes(f) && !tab.textContent.includes('review') &&
        ed && ed.textContent.replace(/\u00a0/g, ' ').includes(n) ? true : null;
    }, [file, needle], 10000);
    if (ok) return true;
    log(`openFile ${file}: attempt ${attempt + 1} missed; rows ${JSON.stringify(await page.evaluate(quickItems))}`);
    await page.keyboard.press('Escape');
  }
  return false;
}

// Text of the visible lines of the active (non-diff) editor.
function activeText() {
  const ed = [...document.querySelectorAll('.editor-group-container.active .editor-instance .monaco-editor .view-lines')]
    .find(e => e.offsetParent !== null && !e.closest('.monaco-diff-editor'));
  return ed ? [...ed.querySelectorAll('.view-line')].map(l => l.textContent.replace(/\u00a0/g, ' ')) : null;
}

// The review diff (vscode.diff on a tosa-review: document): its right side's text.
function reviewDiff() {
  const d = [...document.querySelectorAll('.monaco-diff-editor')].find(e => e.offsetParent !== null);
  if (!d) return null;
  const tab = document.querySelector('.tabs-container .tab.active');
  const mod = d.querySelector('.editor.modified .view-lines');
  return tab && tab.textContent.includes('(review)') && mod ? mod.textContent.replace(/\u00a0/g, ' ') : null;
}

// A notification toast whose message contains `text`: its message (or null).
function toastWith(text) {
  for (const t of document.querySelectorAll('.notifications-toasts .notification-toast')) {
    const m = t.querySelector('.notification-list-item-message');
    if (t.offsetParent !== null && m && m.textContent.includes(text)) return m.textContent;
  }
  return null;
}

// Clicks the button `label` of the toast containing `text`.
async function clickToastButton(page, text, label) {
  const buttons = await page.$$('.notifications-toasts .notification-toast .monaco-button');
  for (const b of buttons) {
    const ok = await b.evaluate((e, [t, l]) => e.textContent.trim() === l &&
      e.closest('.notification-toast').textContent.includes(t), [text, label]);
    if (ok) { await b.click(); return true; }
  }
  return false;
}

// Rows of the Problems panel (file rows and markers), or null when hidden.
function problemRows() {
  const p = document.querySelector('.markers-panel');
  if (!p || p.offsetParent === null) return null;
  return [...p.querySelectorAll('.monaco-list-row')].map(r => r.textContent);
}

// Inlay hints " inferred: ..." in the active editor.
function inferredHints() {
  const out = [];
  const ed = [...document.querySelectorAll('.editor-group-container.active .editor-instance .monaco-editor .view-lines')]
    .find(e => e.offsetParent !== null && !e.closest('.monaco-diff-editor'));
  for (const s of ed ? ed.querySelectorAll('.view-line span') : []) {
    const t = s.textContent.replace(/\u00a0/g, ' ');
    if (s.children.length === 0 && /inferred:/.test(t)) out.push(t.trim());
  }
  return out;
}

// 6./7. Whole-file rewrites: "Migrate this file" from the lightbulb's quick
// fixes (Ctrl+.) on an old-form op, "Refine all shapes" from the palette;
// each opens a review (diff + Apply), and applies only on Apply.
// The helpers the page-side closures below call, defined in the page.
async function installPageHelpers(page) {
  await page.evaluate(`window.activeText = ${activeText}; window.reviewDiff = ${reviewDiff};
    window.toastWith = ${toastWith}; window.problemRows = ${problemRows}; window.inferredHints = ${inferredHints};`);
}

async function reviewSteps(page, goTo) {
  await installPageHelpers(page);
  const OLD = 'old.mlir', REFINE = 'refine.mlir';
  const ws = p => fs.readFileSync(path.join(process.env.WORKSPACE, p), 'utf8').split('\n');
  const lineIn = (lines, needle) => lines.findIndex(l => l.includes(needle)) + 1;

  // 6. Migrate.
  check(await openFile(page, OLD, 'tosa.clamp'), `Quick Open opens ${OLD}`);
  const oldErrors = await poll(page, () => {
    const rows = problemRows();
    return rows && rows.some(r => r.includes("requires attribute 'max_val'")) ? rows.length : null;
  }, null, 20000);
  check(oldErrors, `${OLD}: Problems lists the old clamp's error`, oldErrors);
  const src = ws(OLD);
  await goTo(lineIn(src, 'tosa.clamp'), src[lineIn(src, 'tosa.clamp') - 1].indexOf('tosa.clamp') + 3);
  let actions = null;
  for (let attempt = 0; attempt < 3 && !(actions && actions.some(t => t.includes('Migrate this file'))); attempt++) {
    if (attempt) { await page.keyboard.press('Escape'); await sleep(1000); }
    await page.keyboard.down('Control'); await page.keyboard.press('Period'); await page.keyboard.up('Control');
    actions = await poll(page, () => {
      const rows = [...document.querySelectorAll('.action-widget .monaco-list-row')].map(r => r.textContent);
      return rows.length ? rows : null;
    }, null, 10000);
  }
  check(actions && actions.some(t => /Migrate this file to MLIR 22 TOSA \(2 ops\)/.test(t)),
    'Ctrl+. on the old op offers "Migrate this file to MLIR 22 TOSA (2 ops)" as a quick fix', JSON.stringify(actions));
  for (const r of await page.$$('.action-widget .monaco-list-row')) {
    if ((await r.evaluate(e => e.textContent)).includes('Migrate this file')) { await r.click(); break; }
  }
  const diff = await poll(page, () => {
    const d = reviewDiff();
    return d && d.includes('min_val') ? d : null;
  }, null, 15000);
  const prompt = await poll(page, toastWith, 'Review them in the diff', 5000);
  check(diff && !diff.includes('min_fp') && prompt && prompt.includes('Migrate this file'),
    'choosing it opens a review: a diff with the migrated text and a notification with Apply', `${diff} | ${prompt}`);
  // The screenshot (docs/screenshots/vscode-migrate-review.png): without the
  // side bar, so that more of the diff shows.
  await page.keyboard.down('Control'); await page.keyboard.press('KeyB'); await page.keyboard.up('Control');
  await sleep(700);  // the diff's decorations and the toast's fade-in
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-migrate-review.png') });
  await page.keyboard.down('Control'); await page.keyboard.press('KeyB'); await page.keyboard.up('Control');
  log('migrate review shown');
  // Not applied before Apply.
  check(!fs.readFileSync(path.join(process.env.WORKSPACE, OLD), 'utf8').includes('min_val') && (await page.evaluate(() =>
    [...document.querySelectorAll('.monaco-diff-editor .editor.original .view-line')]
      .some(l => l.textContent.includes('min_fp')))), 'the source is unchanged while the review is open');
  check(await clickToastButton(page, 'Migrate this file', 'Apply'), 'the review notification has an Apply button');
  const migrated = await poll(page, () => {
    const t = activeText();
    if (!t || document.querySelector('.tabs-container .tab.active')?.textContent.includes('review')) return null;
    const all = t.join('\n');
    const rows = problemRows();
    return all.includes('min_val') && !all.includes('min_fp') && rows && rows.length === 0 ? all : null;
  }, null, 20000);
  check(migrated, `Apply: ${OLD} is migrated (min_val, no min_fp), the diff is closed and Problems is empty`,
    JSON.stringify(await page.evaluate(problemRows)));
  const tabsAfter = await page.evaluate(() => [...document.querySelectorAll('.tabs-container .tab')].map(t => t.textContent.trim()));
  check(!tabsAfter.some(t => t.includes('(review)')), 'no review tab is left', JSON.stringify(tabsAfter));

  log('migrate applied');
  // 7. Refine all shapes, from the palette.
  check(await openFile(page, REFINE, 'tosa.transpose'), `Quick Open opens ${REFINE}`);
  const hints = await poll(page, () => { const h = inferredHints(); return h.length ? h : null; }, null, 20000);
  check(hints && hints.includes('inferred: 3x2'), `${REFINE}: inlay hint "inferred: 3x2" before refining`, JSON.stringify(hints));
  log('refine: hints shown');
  const rsrc = ws(REFINE);
  const tline = lineIn(rsrc, 'tosa.transpose');
  await goTo(tline, 5);
  check(await runCommand(page, 'TOSA: Refine All Shapes in Function'), 'palette: "TOSA: Refine All Shapes in Function"');
  let rdiff = await poll(page, () => { const d = reviewDiff(); return d && d.includes('tensor<3x2xf32>') ? d : null; }, null, 15000);
  check(rdiff && await poll(page, toastWith, 'Refine all shapes in @transpose_negate', 5000),
    'the refine review opens (diff with tensor<3x2xf32>, notification)', rdiff);
  log('refine: review opened');
  // The source changes while the review is open: Apply refuses and says why.
  check(await openFile(page, REFINE, 'tosa.transpose'), `back to ${REFINE} (its own tab) while the review is open`);
  await goTo(1, 1);
  await page.keyboard.type('// ', { delay: 20 });
  await sleep(300);
  // Back to the review's tab (its left side shows the edit) and Apply from
  // its title bar (the notification may have timed out by now).
  for (const t of await page.$$('.tabs-container .tab')) {
    if ((await t.evaluate(e => e.textContent)).includes('(review)')) { await t.click(); break; }
  }
  const titleApply = '.editor-actions .action-label[aria-label^="Apply Reviewed Rewrite"]';
  const applyButton = await poll(page, sel => {
    const a = document.querySelector(sel);
    return a && a.offsetParent !== null && reviewDiff() ? true : null;
  }, titleApply, 10000);
  check(applyButton, 'the review diff has an Apply button in its title bar');
  if (applyButton) await page.click(titleApply);
  const stale = await poll(page, toastWith, 'changed since', 10000);
  check(stale && stale.includes('nothing applied'), 'Apply after an edit of the source: refused with a message', stale);
  log('refine: stale apply refused');
  const still = await page.evaluate(activeText);
  check(still && still.some(l => l.includes('tosa.transpose') && l.includes('-> tensor<?x?xf32>')),
    'the source keeps its text (the stale rewrite is not applied)', JSON.stringify(still));
  // Again on the current text; Apply from the title bar again (the first
  // review's notification may still be up: its Apply would say "closed").
  await goTo(tline, 5);
  check(await runCommand(page, 'TOSA: Refine All Shapes in Function'), 'palette: refine again');
  rdiff = await poll(page, () => { const d = reviewDiff(); return d && d.includes('tensor<3x2xf32>') ? d : null; }, null, 15000);
  const again = await poll(page, sel => {
    const a = document.querySelector(sel);
    return a && a.offsetParent !== null ? true : null;
  }, titleApply, 5000);
  check(rdiff && again, 'the new review: diff with tensor<3x2xf32>, Apply in its title bar');
  log('refine: second review opened');
  if (again) await page.click(titleApply);
  const refined = await poll(page, () => {
    const t = activeText();
    if (!t || document.querySelector('.tabs-container .tab.active')?.textContent.includes('review')) return null;
    const tr = t.find(l => l.includes('tosa.transpose'));
    return tr && tr.includes('-> tensor<3x2xf32>') && t.some(l => l.startsWith('// // Result')) ? t : null;
  }, null, 15000);
  check(refined, `Apply: ${REFINE}'s result types are refined (the edit made meanwhile is kept)`, JSON.stringify(await page.evaluate(activeText)));
  const hintsAfter = await poll(page, () => { const h = inferredHints(); return h.length === 0 ? true : null; }, null, 10000);
  check(hintsAfter, `${REFINE}: no "inferred:" hint left after refining`, JSON.stringify(await page.evaluate(inferredHints)));
  log('refine: applied');
  const nothing = await (async () => {
    await goTo(tline, 5);
    await runCommand(page, 'TOSA: Refine All Shapes in Function');
    return poll(page, toastWith, 'nothing to refine in @transpose_negate', 10000);
  })();
  check(nothing, 'refining again says there is nothing to refine', nothing);
  log('refine done');
}

// 8. A clean file with many refinable ops (bench/gen.py, 10k lines): nothing
// in Problems (no "Not showing N further errors and warnings"), the refined
// shapes still in the inlay hints.
async function cleanFileSteps(page) {
  await installPageHelpers(page);
  const MANY = 'many.mlir';
  if (!fs.existsSync(path.join(process.env.WORKSPACE, MANY))) { check(false, `${MANY} generated by run.sh`); return; }
  check(await openFile(page, MANY, 'func.func @f0'), `Quick Open opens ${MANY} (10k lines)`);
  const hints = await poll(page, () => { const h = inferredHints(); return h.length >= 3 ? h : null; }, null, 30000);
  check(hints, `${MANY}: inlay hints show the refined shapes`, JSON.stringify(hints));
  await sleep(2000);  // the publish comes before the hints are asked for; give VS Code time to show it
  const rows = await page.evaluate(problemRows);
  const panel = await page.evaluate(() => document.querySelector('.markers-panel')?.textContent || '');
  check(rows && rows.length === 0 && !/Not showing/.test(panel), `${MANY}: Problems is empty (no per-op entries, no "Not showing N further")`,
    `${rows && rows.length} rows: ${JSON.stringify((rows || []).slice(0, 3))}`);
  await page.screenshot({ path: path.join(OUTDIR, 'many-clean.png') });
  log('clean 10k-line file done');
}


// Saves and closes every editor (no "save changes?" dialog in the way).
async function closeAll(page) {
  await runCommand(page, 'File: Save All Files');
  await sleep(500);
  await runCommand(page, 'View: Close All Editor Groups');
  await sleep(500);
}

// Monaco's suggest widget rows (label text), or null when hidden.
function suggestRows() {
  // Fixed-position widgets: no offsetParent; shown = laid out and not hidden.
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).display !== 'none' && getComputedStyle(e).visibility !== 'hidden';
  const w = [...document.querySelectorAll('.suggest-widget')].find(shown);
  if (!w) return null;
  return [...w.querySelectorAll('.monaco-list-row')].map(r => ({
    label: (r.querySelector('.label-name') || r).textContent.trim(), focused: r.classList.contains('focused') }));
}

// The visible parameter-hints (signature help) widget's text, or null.
function signatureText() {
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).display !== 'none' && getComputedStyle(e).visibility !== 'hidden';
  const w = [...document.querySelectorAll('.parameter-hints-widget')].find(shown);
  return w ? w.textContent.replace(/\u00a0/g, ' ') : null;
}

// 9. The editing features (issues 37, 38) in edit.mlir: fold a function the
// indentation cannot fold, Format Document, rename (F2), completion after
// `tosa.` with the conv2d snippet, signature help while typing operands.
async function editingSteps(page, goTo) {
  await installPageHelpers(page);
  await page.evaluate(`window.suggestRows = ${suggestRows}; window.signatureText = ${signatureText};`);
  const EDIT = 'edit.mlir';
  const src = fs.readFileSync(path.join(process.env.WORKSPACE, EDIT), 'utf8').split('\n');
  const lineIn = needle => src.findIndex(l => l.includes(needle)) + 1;
  check(await openFile(page, EDIT, 'func.func @flat'), `Quick Open opens ${EDIT}`);
  const key = async (mods, k) => {
    for (const m of mods) await page.keyboard.down(m);
    await page.keyboard.press(k);
    for (const m of [...mods].reverse()) await page.keyboard.up(m);
  };

  // Fold @flat (Ctrl+Shift+[): its body is not indented, so the fold is the
  // server's folding range; the `}` stays visible.
  const body = '%0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>';
  let folded = null;
  for (let attempt = 0; attempt < 6 && !folded; attempt++) {
    await goTo(lineIn('func.func @flat'), 1);
    await key(['Control', 'Shift'], 'BracketLeft');
    folded = await poll(page, b => {
      const t = activeText();
      return t && t.some(l => l.includes('func.func @flat')) && !t.some(l => l.includes(b)) &&
        t.some(l => l.includes('func.func @edit')) ? t : null;
    }, body, 2000);
  }
  check(folded, 'Ctrl+Shift+[ on func.func @flat folds its body (the server\'s folding range)', JSON.stringify(await page.evaluate(activeText)));
  await page.screenshot({ path: path.join(OUTDIR, 'fold.png') });
  await key(['Control', 'Shift'], 'BracketRight');
  const unfolded = await poll(page, b => (activeText() || []).some(l => l.includes(b)) ? true : null, body, 5000);
  check(unfolded, 'Ctrl+Shift+] unfolds it');

  // Format Document: @flat's body is indented by two spaces.
  await goTo(lineIn('func.func @flat'), 1);
  check(await runCommand(page, 'Format Document'), 'palette: Format Document');
  const formatted = await poll(page, b => {
    const t = activeText();
    return t && t.includes('  ' + b) && t.includes('  return %0 : tensor<2xf32>') ? t : null;
  }, body, 10000);
  check(formatted, 'Format Document indents @flat\'s body by two spaces', JSON.stringify(await page.evaluate(activeText)));

  // Rename %sum (F2) to %total: the definition and both uses.
  const sumLine = lineIn('%sum = tosa.add');
  await goTo(sumLine, 4);
  await page.keyboard.press('F2');
  const box = await poll(page, () => {
    const i = [...document.querySelectorAll('.rename-box input, .rename-box .rename-input')].find(e => e.offsetParent !== null);
    return i ? (i.value !== undefined ? i.value : i.textContent) || '(empty)' : null;
  }, null, 10000);
  check(box === '%sum', 'F2 on %sum opens the rename box with "%sum"', box);
  await key(['Control'], 'KeyA');
  await page.keyboard.type('%total', { delay: 20 });
  await page.keyboard.press('Enter');
  const renamed = await poll(page, () => {
    const all = (activeText() || []).join('\n');
    return !all.includes('%sum') && (all.match(/%total\b/g) || []).length === 3 ? all : null;
  }, null, 10000);
  check(renamed, 'rename: %sum becomes %total at its definition and both uses', (await page.evaluate(activeText) || []).join('\n'));

  // Completion: a new line `%c = tosa.` offers the op names; conv2d's
  // snippet goes in with its placeholders, the first one selected.
  const twiceLine = lineIn('%twice = tosa.add');
  await goTo(twiceLine, 3);
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('%c = tosa.', { delay: 40 });
  // (The list is virtual: only the rows in view are in the DOM.)
  let rows = await poll(page, () => { const r = suggestRows(); return r && r.some(x => x.label === 'add') ? r : null; }, null, 8000);
  if (!rows) {  // not triggered by the `.` (timing): ask (Ctrl+Space)
    await key(['Control'], 'Space');
    rows = await poll(page, () => { const r = suggestRows(); return r && r.some(x => x.label === 'add') ? r : null; }, null, 8000);
  }
  check(rows && rows.some(x => x.label === 'abs') && rows.some(x => x.label === 'add') && !rows.some(x => x.label.startsWith('%')),
    'completion after `tosa.` lists the TOSA ops (abs, add, ...; no values)', JSON.stringify(rows || await page.evaluate(suggestRows)));
  await page.keyboard.type('conv2', { delay: 60 });
  const focused = await poll(page, () => { const r = suggestRows(); const f = r && r.find(x => x.focused); return f && f.label === 'conv2d' ? f.label : null; }, null, 5000);
  check(focused, 'typing `conv2` focuses conv2d', JSON.stringify(await page.evaluate(suggestRows)));
  await sleep(600);  // the details pane
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-completion.png') });
  await page.keyboard.press('Enter');
  const inserted = await poll(page, () => {
    const l = (activeText() || []).find(x => x.includes('%c = tosa.conv2d'));
    return l && !l.includes('${') ? l : null;
  }, null, 5000);
  check(inserted && /tosa\.conv2d %input, %weight, %bias, %input_zp, %weight_zp \{.*\} : \(operand types\) -> result type/.test(inserted),
    'accepting conv2d inserts its snippet (operands, zero points, attributes, types)', inserted);
  const sel = await poll(page, () => {
    const s = document.querySelector('.statusbar')?.textContent || '';
    const m = s.match(/\((\d+) selected\)/);
    return m ? Number(m[1]) : null;
  }, null, 3000);
  check(sel === '%input'.length, 'the first placeholder (%input) is selected', sel);
  // Typing the first operand: `%` asks for signature help, tosa.conv2d's.
  await page.keyboard.type('%arg0', { delay: 60 });
  let sig = await poll(page, () => { const t = signatureText(); return t && t.includes('tosa.conv2d') ? t : null; }, null, 5000);
  if (!sig) {
    await key(['Control', 'Shift'], 'Space');
    sig = await poll(page, () => { const t = signatureText(); return t && t.includes('tosa.conv2d') ? t : null; }, null, 5000);
  }
  check(sig && sig.includes('%weight'), 'signature help shows tosa.conv2d\'s operands while typing them', sig);
  await sleep(300);
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-signature-help.png') });
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  log('editing features done');
}

// The graph webview's frame (code-server nests it in iframes).
async function graphFrame(page) {
  for (const f of page.frames()) {
    const ok = await f.evaluate(() => !!document.querySelector('#tosa-graph svg g.node')).catch(() => false);
    if (ok) return f;
  }
  return null;
}

// The graph's op nodes: title, classes, id, the rect's fill.
function graphNodes() {
  return [...document.querySelectorAll('#tosa-graph svg g.node')].map(g => {
    const r = g.querySelector('rect');
    return { id: g.getAttribute('data-id'), cls: g.getAttribute('class'),
      title: (g.querySelector('text.title') || g.querySelector('text') || {}).textContent || '',
      text: g.textContent, fill: r ? getComputedStyle(r).fill : '' };
  });
}

// 10. TOSA: Show Graph (issue 39): the webview, a click on a node selects
// its op, an edit redraws the label, the error node is red.
async function graphSteps(page, goTo) {
  await installPageHelpers(page);
  const GRAPH = 'graph.mlir';
  const src = fs.readFileSync(path.join(process.env.WORKSPACE, GRAPH), 'utf8').split('\n');
  const lineIn = needle => src.findIndex(l => l.includes(needle)) + 1;
  check(await openFile(page, GRAPH, 'func.func @model'), `Quick Open opens ${GRAPH}`);
  await goTo(lineIn('%sum = tosa.add'), 5);
  check(await runCommand(page, 'TOSA: Show Graph'), 'palette: "TOSA: Show Graph"');
  let frame = null;
  const end = Date.now() + 30000;
  while (!frame && Date.now() < end) { frame = await graphFrame(page); if (!frame) await sleep(500); }
  check(frame, 'the graph webview draws nodes');
  if (!frame) { await page.screenshot({ path: path.join(OUTDIR, 'failure-graph.png') }); return; }
  let nodes = await frame.evaluate(graphNodes);
  const titles = nodes.map(n => n.title);
  check(['tosa.add', 'tosa.abs', 'tosa.sub'].every(t => titles.includes(t)), 'the graph of @model has its ops', JSON.stringify(titles));
  const layoutBy = await frame.evaluate(() => document.querySelector('#tosa-graph').dataset.layoutBy);
  check(layoutBy === 'elk', 'a small function is laid out by ELK (loaded when it is needed)', layoutBy);
  const dyn = nodes.find(n => n.id === '%dyn');
  check(dyn && /\binferred\b/.test(dyn.cls) && dyn.text.includes('%dyn : ?x3xf32') && dyn.text.includes('\u2192 inferred 2x3xf32'),
    'the op whose inferred shape (2x3) differs from the declared one (?x3) has the inferred style and line', JSON.stringify(dyn));
  const sub = nodes.find(n => n.title === 'tosa.sub');
  check(sub && /\berror\b/.test(sub.cls) && sub.fill === 'rgb(253, 232, 232)' && nodes.filter(n => /\berror\b/.test(n.cls)).length === 1,
    'the tosa.sub with the wrong result type is the one red (error) node', JSON.stringify(nodes.map(n => [n.title, n.cls, n.fill])));
  // The cursor is on `%sum` (before the op name): its op's node is current.
  const current = await frame.evaluate(() =>
    [...document.querySelectorAll('#tosa-graph svg g.node.current')].map(g =>
      (g.querySelector('text.title') || g.querySelector('text') || {}).textContent || ''));
  check(current.length === 1 && current[0] === 'tosa.add',
    'the cursor on a result name highlights its op\'s node', JSON.stringify(current));
  await sleep(500);
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-graph.png') });
  // Click tosa.abs: the editor selects the op.
  const abs = nodes.find(n => n.title === 'tosa.abs');
  const absLine = lineIn('%mag = tosa.abs');
  const h = abs && await frame.$(`g.node[data-id="${abs.id.replace(/"/g, '\\"')}"] text.title`);
  if (h) await h.click();
  const selected = await poll(page, l => {
    const s = document.querySelector('.statusbar')?.textContent || '';
    return new RegExp(`Ln ${l}, Col \\d+ \\(\\d+ selected\\)`).test(s) ? s.match(/Ln [^(]*\(\d+ selected\)/)[0] : null;
  }, absLine, 10000);
  check(h && selected, `a click on the tosa.abs node selects its op in the editor (line ${absLine})`, selected ||
    await page.evaluate(() => document.querySelector('.statusbar')?.textContent));
  // Edit: tosa.abs -> tosa.exp; the node's label follows.
  await goTo(absLine, src[absLine - 1].indexOf('tosa.abs') + 6);
  for (let i = 0; i < 3; i++) { await page.keyboard.down('Shift'); await page.keyboard.press('ArrowRight'); await page.keyboard.up('Shift'); }
  await page.keyboard.type('exp', { delay: 30 });
  const relabelled = await poll(page, () => true, null, 100) && await (async () => {
    const stop = Date.now() + 15000;
    while (Date.now() < stop) {
      const f = await graphFrame(page);
      const ns = f ? await f.evaluate(graphNodes).catch(() => []) : [];
      if (ns.some(n => n.title === 'tosa.exp') && !ns.some(n => n.title === 'tosa.abs')) return ns.map(n => n.title);
      await sleep(300);
    }
    return null;
  })();
  check(relabelled, 'editing tosa.abs to tosa.exp relabels its node', JSON.stringify(relabelled));
  // Edit a shape: %dyn's declared ?x3 becomes 2x3; its node's label follows.
  const dynLine = lineIn('%dyn = tosa.exp');
  await goTo(dynLine, src[dynLine - 1].lastIndexOf('?') + 1);
  await page.keyboard.down('Shift'); await page.keyboard.press('ArrowRight'); await page.keyboard.up('Shift');
  await page.keyboard.type('2', { delay: 30 });
  let reshaped = null;
  for (const stop = Date.now() + 15000; !reshaped && Date.now() < stop;) {
    const f = await graphFrame(page);
    const n = (f ? await f.evaluate(graphNodes).catch(() => []) : []).find(x => x.id === '%dyn');
    if (n && n.text.includes('%dyn : 2x3xf32') && !/\binferred\b/.test(n.cls)) reshaped = n; else await sleep(300);
  }
  check(reshaped, 'editing %dyn\'s type to 2x3 changes its node\'s shape label (and it is not "inferred" any more)', JSON.stringify(reshaped));
  await loweredGraphSteps(page, goTo, lineIn);
  await closeAll(page);
  log('graph done');
}

// A big function (over FAST_NODES: layered.js) is laid out in the page's
// worker, not on its thread: the webview's CSP must let the blob: worker
// run, and the page must use it. Then a pan while it is laid out again.
async function bigGraphSteps(page, goTo) {
  check(await openFile(page, 'bigfn.mlir', 'func.func @f0'), 'Quick Open opens bigfn.mlir');
  await goTo(3, 5);
  // The editor title's button.
  const button = await poll(page, () => {
    const b = [...document.querySelectorAll('.editor-actions .action-label')].find(a => /Show Graph/.test(a.getAttribute('aria-label') || a.title || ''));
    if (!b) return null;
    const r = b.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }, null, 10000);
  if (button) await page.mouse.click(button.x, button.y);
  check(button, 'the editor title\'s "Show Graph" button on a big function');
  const drawn = async () => {
    for (const f of page.frames()) {
      const d = await f.evaluate(() => {
        const c = document.querySelector('#tosa-graph');
        return c && c.dataset.rendered && document.querySelector('#tosa-graph svg g.node')
          ? { nodes: +c.dataset.nodes, layoutIn: c.dataset.layoutIn, rendered: c.dataset.rendered, ms: +c.dataset.layoutMs } : null;
      }).catch(() => null);
      if (d) return { frame: f, ...d };
    }
    return null;
  };
  let g = null;
  for (const stop = Date.now() + 60000; !g && Date.now() < stop;) { g = await drawn(); if (!g) await sleep(500); }
  check(g && g.nodes > 250, 'the big function is drawn (layered.js)', g && JSON.stringify({ nodes: g.nodes, ms: g.ms }));
  if (!g) return;
  check(g.layoutIn === 'worker', 'the big function was laid out in the webview\'s worker, not on the page\'s thread', g.layoutIn);
  // A new panel: ELK (1.6 MB) is loaded only for a small function.
  const elk = await g.frame.evaluate(() => typeof ELK).catch(e => String(e));
  check(elk === 'undefined', 'the webview of a big function did not load ELK', elk);
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-graph-big.png') });
  await closeAll(page);
}

// The graph's titles once `want(titles)` holds (the frame is looked up
// again: a redraw may replace it), else null after `ms`.
async function graphTitlesWhen(page, want, ms) {
  const stop = Date.now() + ms;
  while (Date.now() < stop) {
    const f = await graphFrame(page);
    const ns = f ? await f.evaluate(graphNodes).catch(() => []) : [];
    const titles = ns.map(n => n.title);
    if (want(titles)) return { frame: f, nodes: ns, titles };
    await sleep(300);
  }
  return null;
}

// The toggle (issue 39): @clean after the preview's linalg lowering, a
// click on a lowered node selects the tosa op it came from, and back.
async function loweredGraphSteps(page, goTo, lineIn) {
  await goTo(lineIn('%t = tosa.tanh'), 5);
  // The code lens above `func.func @clean` (the second function's).
  const lens = await poll(page, () => {
    const ls = [...document.querySelectorAll('.editor-instance .codelens-decoration a')].filter(a => a.textContent.trim() === 'Show Graph')
      .map(a => a.getBoundingClientRect()).sort((a, b) => a.top - b.top);
    return ls.length >= 2 ? { x: ls[1].left + ls[1].width / 2, y: ls[1].top + ls[1].height / 2 } : null;
  }, null, 10000);
  if (lens) await page.mouse.click(lens.x, lens.y);
  check(lens, 'the "Show Graph" code lens above func.func @clean');
  let g = await graphTitlesWhen(page, t => t.includes('tosa.tanh'), 30000);
  check(g, 'the graph follows to @clean', g && JSON.stringify(g.titles));
  if (!g) return;
  const toggle = await g.frame.$('button[data-act="stage"]');
  check(toggle && await toggle.evaluate(b => !b.hidden && b.textContent === 'After lowering'), 'the webview has the "After lowering" toggle');
  if (!toggle) return;
  await toggle.click();
  // The preview's default mode (fast) fuses exp and tanh into one generic.
  g = await graphTitlesWhen(page, t => t.includes('linalg.generic') && !t.some(x => x.startsWith('tosa.')), 60000);
  check(g, 'the toggle draws @clean after linalg lowering (linalg.generic, no tosa op)', g && JSON.stringify(g.titles));
  if (!g) return;
  const status = await g.frame.evaluate(() => document.querySelector('.tg-status').textContent);
  check(/after linalg lowering/.test(status), 'the status says which stage is drawn', status);
  await sleep(500);
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-graph-linalg.png') });
  // The last linalg.generic ends at tosa.tanh: a click selects it.
  const gen = g.nodes.filter(n => n.title === 'linalg.generic').pop();
  const h = gen && await g.frame.$(`g.node[data-id="${gen.id.replace(/"/g, '\\"')}"] text.title`);
  if (h) await h.click();
  const tanhLine = lineIn('%t = tosa.tanh');
  const selected = await poll(page, l => {
    const s = document.querySelector('.statusbar')?.textContent || '';
    return new RegExp(`Ln ${l}, Col \\d+ \\(\\d+ selected\\)`).test(s) ? s.match(/Ln [^(]*\(\d+ selected\)/)[0] : null;
  }, tanhLine, 10000);
  check(h && selected, `a click on a lowered node selects the tosa op it came from (line ${tanhLine})`, selected ||
    await page.evaluate(() => document.querySelector('.statusbar')?.textContent));
  const back = await (await graphFrame(page))?.$('button[data-act="stage"]');
  if (back) await back.click();
  g = await graphTitlesWhen(page, t => t.includes('tosa.tanh') && !t.includes('linalg.generic'), 30000);
  check(back && g, 'the toggle again: @clean as written', g && JSON.stringify(g.titles));
}

// 11. `.mlirbc` (issue 37): opens as text through mlir/convertFromBytecode
// (hover works on it), saves back as bytecode that mlir-opt-22 reads, is
// never written while the text has errors, and bad bytecode says why.
async function bytecodeSteps(page, goTo) {
  await installPageHelpers(page);
  const { execFileSync } = require('child_process');
  const MODEL = 'model.mlirbc', BAD = 'truncated.mlirbc';
  const file = path.join(process.env.WORKSPACE, MODEL), bad = path.join(process.env.WORKSPACE, BAD);
  const before = fs.readFileSync(file), badBefore = fs.readFileSync(bad);
  check(await openFile(page, MODEL, 'tosa.abs'), `Quick Open opens ${MODEL} as MLIR text`);
  const lines = await page.evaluate(activeText) || [];
  check(lines.some(l => l.includes('tosa.add %arg0, %arg1')), `${MODEL}: the text has the ops`, JSON.stringify(lines));
  let hover = null;
  for (let attempt = 0; attempt < 6 && !hover; attempt++) {
    const at = await page.evaluate(locate, { needle: 'tosa.add', from: 5 });
    if (!at) { await sleep(500); continue; }
    await page.mouse.move(at.x + 200, at.y + 200);
    await sleep(200);
    await page.mouse.move(at.x, at.y, { steps: 3 });
    hover = await poll(page, () => {
      for (const h of document.querySelectorAll('.monaco-hover, .monaco-resizable-hover'))
        if (h.offsetParent !== null && (h.textContent || '').includes('tosa.add')) return h.textContent;
      return null;
    }, null, 3000);
  }
  check(hover, `${MODEL}: hover on tosa.add answers`, hover);
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');
  // tosa.abs -> tosa.exp, save: bytecode on disk that mlir-opt-22 reads.
  const lineOf = (t, needle) => t.findIndex(l => l.includes(needle)) + 1;
  let l = lineOf(lines, 'tosa.abs');
  await goTo(l, lines[l - 1].indexOf('tosa.abs') + 6);
  for (let i = 0; i < 3; i++) { await page.keyboard.down('Shift'); await page.keyboard.press('ArrowRight'); await page.keyboard.up('Shift'); }
  await page.keyboard.type('exp', { delay: 30 });
  await page.keyboard.down('Control'); await page.keyboard.press('KeyS'); await page.keyboard.up('Control');
  let saved = null;
  for (let i = 0; i < 40 && !saved; i++) {
    await sleep(250);
    const now = fs.readFileSync(file);
    if (!now.equals(before)) saved = now;
  }
  let readBack = '';
  try { readBack = saved ? execFileSync('mlir-opt-22', [file], { encoding: 'utf8' }) : ''; } catch (e) { readBack = `mlir-opt-22 failed: ${e.stderr || e}`; }
  check(saved && saved.subarray(0, 4).equals(Buffer.from([0x4d, 0x4c, 0xef, 0x52])) && readBack.includes('tosa.exp') && !readBack.includes('tosa.abs'),
    `save: ${MODEL} is bytecode again (mlir-opt-22 reads it, with the edit)`, readBack || (saved ? saved.subarray(0, 16).toString('hex') : 'unchanged'));
  const clean = await poll(page, () => !document.querySelector('.tabs-container .tab.active.dirty') ? true : null, null, 5000);
  check(clean, `${MODEL}: the editor is not dirty after the save`);
  // An error: Problems shows it; a save is refused and the file unchanged.
  const afterSave = fs.readFileSync(file);
  await goTo(l, lines[l - 1].indexOf('tosa.abs') + 6);
  for (let i = 0; i < 3; i++) { await page.keyboard.down('Shift'); await page.keyboard.press('ArrowRight'); await page.keyboard.up('Shift'); }
  await page.keyboard.type('xyz', { delay: 30 });
  const problem = await poll(page, () => {
    const rows = problemRows();
    return rows && rows.some(r => r.includes('tosa.xyz')) ? rows.join(' | ') : null;
  }, null, 15000);
  check(problem, `${MODEL}: Problems lists the error of the edited text`, JSON.stringify(await page.evaluate(problemRows)));
  await page.keyboard.down('Control'); await page.keyboard.press('KeyS'); await page.keyboard.up('Control');
  const refused = await poll(page, toastWith, 'not saved', 10000);
  await sleep(500);
  check(refused && /has errors|fix/.test(refused) && fs.readFileSync(file).equals(afterSave),
    `a save with errors is refused with the server's reason and ${MODEL} keeps its bytecode`, refused);
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-bytecode.png') });
  // Bad bytecode: a clear error, the file untouched.
  await runCommand(page, 'View: Revert File');
  await sleep(500);
  if (await quickInput(page, { key: 'KeyP' }, BAD)) {
    await poll(page, f => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].some(r => r.textContent.includes(f)), BAD, 5000);
    await page.keyboard.press('Enter');
  }
  const badMsg = await poll(page, toastWith, `Cannot open ${BAD}`, 15000);
  check(badMsg && /cannot read the bytecode|not MLIR bytecode/.test(badMsg) && badMsg.includes('not changed') && fs.readFileSync(bad).equals(badBefore),
    `${BAD}: a clear error ("Cannot open ... as MLIR text: <why>"), the file unchanged`, badMsg);
  check(fs.readFileSync(file).equals(afterSave), `${MODEL} on disk is still the saved bytecode`);
  log('bytecode done');
}

// 12. TOSA: Compile to Native Code, with tosaLsp.compile.threads = 2 in the
// user's settings (run.sh): the shared library of kernel.mlir's 2^24-FLOP
// matmul links libomp (its kernel runs on threads).
async function compileSteps(page) {
  await installPageHelpers(page);
  check(await openFile(page, 'kernel.mlir', 'tosa.matmul'), 'Quick Open opens kernel.mlir');
  await sleep(1000);
  const ran = await runCommand(page, 'TOSA: Compile to Native Code');
  // "Compile what?": the first choice (the function or the file, the same
  // here); "Output kind": shared.
  const picks = [];
  for (const want of ['', 'shared']) {
    const open = await poll(page, () => {
      const w = document.querySelector('.quick-input-widget');
      return w && w.offsetParent !== null && w.querySelector('.monaco-list-row') ? true : null;
    }, null, 10000);
    if (!open) break;
    if (want) await page.keyboard.type(want, { delay: 15 });
    await sleep(300);
    await page.keyboard.press('Enter');
    picks.push(want || 'first');
    await sleep(500);
  }
  const done = await poll(page, toastWith, 'Compiled ', 60000);
  const m = done && done.match(/(\/\S+\.so)/);
  const so = m && m[1];
  check(so && fs.existsSync(so), 'TOSA: Compile to Native Code writes the shared library', `ran=${ran} picks=${picks} toast=${done}`);
  let needed = '';
  try { needed = so ? require('child_process').execFileSync('readelf', ['-d', so], { encoding: 'utf8' }) : ''; } catch (e) { needed = String(e); }
  check(/NEEDED.*libomp\.so\.5/.test(needed),
    'with tosaLsp.compile.threads = 2 the library needs libomp (its matmul runs on threads)', needed.split('\n').filter(l => l.includes('NEEDED')).join(' | '));
  await page.screenshot({ path: path.join(OUTDIR, 'vscode-compile-threads.png') });
  log('compile done');
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
    // The markdown renders: rules as <hr> (no literal ---), tables as <table>
    // with their cells, no literal pipes.
    const md = await page.evaluate(() => {
      for (const h of document.querySelectorAll('.monaco-hover, .monaco-resizable-hover')) {
        if (h.offsetParent === null || !(h.textContent || '').includes('Inferred')) continue;
        const c = h.querySelector('.hover-contents, .rendered-markdown') || h;
        return { text: c.textContent, hr: c.querySelectorAll('hr').length, tables: c.querySelectorAll('table').length,
          cells: c.querySelectorAll('td, th').length };
      }
      return null;
    });
    check(md && !md.text.includes('---') && md.hr > 0 && !/\|\s*-{3,}/.test(md.text) &&
      (md.tables === 0 || md.cells > 0), 'hover markdown renders (rules as <hr>, no literal --- or table pipes)',
      JSON.stringify(md && { ...md, text: md.text.slice(0, 300) }));
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

    await runCommand(page, 'View: Close All Editor Groups');
    await sleep(500);
    await reviewSteps(page, goTo);
    await cleanFileSteps(page);
    await closeAll(page);
    await editingSteps(page, goTo);
    await closeAll(page);
    await graphSteps(page, goTo);
    await bigGraphSteps(page, goTo);
    await bytecodeSteps(page, goTo);
    await closeAll(page);
    await compileSteps(page);
  } catch (e) {
    failed++;
    console.log(`FAIL: exception: ${e && e.stack || e}`);
  } finally {
    if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
  }
  finish();
})();
