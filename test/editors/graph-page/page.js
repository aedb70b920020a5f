// The graph view in headless Chromium (issue 39), on the pages and the SVG
// `tosa-lsp graph` writes: the view's controls (search, zoom, pan, fit,
// collapse and expand, the cursor's node, a new model drawn where the view
// is), the styles (red errors, inferred shapes, `?` dims), ELK loaded only
// for a small function, and the big inputs: a 4,000-op function (the page,
// and the SVG opened and screenshotted), 600 regions over the node limit
// (collapsed, said so), a 20,000-op function (cut, said so).
//   node page.js TOSA_LSP OUTDIR      (NODE_PATH: puppeteer-core)
// Prints a line per check and "graph-page: N passed, M failed".
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const puppeteer = require('puppeteer-core');

const [tosaLsp, outdir] = process.argv.slice(2);
const bench = path.join(__dirname, '..', '..', '..', 'bench');
let passed = 0, failed = 0;
function check(ok, what, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok' : 'FAIL'}: ${what}${ok || detail === undefined ? '' : ' -- ' + detail}`);
}

const MODEL = `func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %c: tensor<i1>, %d: tensor<3x2xf32>) -> tensor<?x3xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3xf32>}> : () -> tensor<1x3xf32>
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %bad = tosa.sub %a, %d : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %1 = tosa.cond_if %c : tensor<i1> -> tensor<?x3xf32> {
    %2 = tosa.mul %0, %w, %s : (tensor<?x3xf32>, tensor<1x3xf32>, tensor<1xi8>) -> tensor<?x3xf32>
    tosa.yield %2 : tensor<?x3xf32>
  } else {
    tosa.yield %0 : tensor<?x3xf32>
  }
  return %1 : tensor<?x3xf32>
}
`;

// 600 tosa.cond_if of 10 ops each: 6,603 nodes, over the node limit.
function regions(n) {
  const t = 'tensor<2x3xf32>';
  const l = [`func.func @f0(%a: ${t}, %c: tensor<i1>) -> ${t} {`];
  let prev = '%a';
  for (let i = 0; i < n; i++) {
    l.push(`  %r${i} = tosa.cond_if %c : tensor<i1> -> ${t} {`);
    let v = prev;
    for (let k = 0; k < 9; k++) { l.push(`    %b${i}_${k} = tosa.exp ${v} : (${t}) -> ${t}`); v = `%b${i}_${k}`; }
    l.push(`    tosa.yield ${v} : ${t}`, '  } else {', `    tosa.yield ${prev} : ${t}`, '  }');
    prev = `%r${i}`;
  }
  l.push(`  return ${prev} : ${t}`, '}');
  return l.join('\n') + '\n';
}

const file = (name, text) => { const p = path.join(outdir, name); fs.writeFileSync(p, text); return p; };
const graph = (src, fmt, out) => execFileSync(tosaLsp, ['graph', src, `--format=${fmt}`, '-o', out, '--force'], { stdio: 'pipe' });
const gen = (lines, out) => execFileSync('python3', [path.join(bench, 'gen.py'), '--lines', String(lines), '--shape', 'one', '-o', out], { stdio: 'ignore' });

async function open(browser, p, until = 'domcontentloaded') {
  const page = await browser.newPage();
  page.errors = [];
  page.on('pageerror', e => page.errors.push(e.message));
  await page.goto('file://' + p, { waitUntil: until, timeout: 120000 });
  return page;
}
const drawn = (page, n = 1) => page.waitForFunction(k => +(document.querySelector('#tosa-graph').dataset.rendered || 0) >= k,
  { timeout: 120000, polling: 50 }, n);
const state = page => page.evaluate(() => window.tosaGraphView.state());
const nodeOf = (page, id) => page.evaluate(i => {
  const g = [...document.querySelectorAll('#tosa-graph svg g[data-id]')].find(e => e.getAttribute('data-id') === i && !e.classList.contains('head'));
  if (!g) return null;
  const r = g.querySelector('rect'), cs = getComputedStyle(r);
  return { cls: g.getAttribute('class'), text: g.textContent, fill: cs.fill, dash: cs.strokeDasharray };
}, id);
async function button(page, act) {
  const before = (await state(page));
  await page.click(`button[data-act="${act}"]`);
  await new Promise(r => setTimeout(r, 100));
  return before;
}
// The picture's box inside the canvas' box.
const fits = page => page.evaluate(() => {
  const c = document.querySelector('.tg-canvas').getBoundingClientRect();
  const v = document.querySelector('#tosa-graph svg .viewport').getBoundingClientRect();
  return v.left >= c.left - 1 && v.right <= c.right + 1 && v.top >= c.top - 1 && v.bottom <= c.bottom + 1;
});

async function smallPage(browser) {
  const src = file('model.mlir', MODEL);
  graph(src, 'html', path.join(outdir, 'model.html'));
  const page = await open(browser, path.join(outdir, 'model.html'));
  await drawn(page);
  const d = await page.evaluate(() => ({ ...document.querySelector('#tosa-graph').dataset, elk: typeof ELK }));
  check(d.layoutBy === 'elk' && d.elk === 'function', 'a small function is laid out by ELK, loaded for it', JSON.stringify(d));
  const bad = await nodeOf(page, '%bad'), add = await nodeOf(page, '%0');
  check(bad && /\berror\b/.test(bad.cls) && bad.fill === 'rgb(253, 232, 232)', 'the op with an error is a red node', JSON.stringify(bad));
  check(add && /\binferred\b/.test(add.cls) && /6px,? 3px/.test(add.dash) && add.text.includes('\u2192 inferred 2x3xf32'),
    'the op whose inferred shape differs from the declared one: dashed amber, the inferred shape on a line', JSON.stringify(add));
  const dims = await page.evaluate(() => ({ dyn: document.querySelectorAll('#tosa-graph tspan.dyn').length,
    labels: [...document.querySelectorAll('#tosa-graph text.elabel')].map(t => t.textContent) }));
  check(dims.dyn > 0 && dims.labels.includes('?x3xf32') && dims.labels.includes('2x3xf32'), 'edges labelled with shapes, ? dims marked', JSON.stringify(dims));
  check(!!(await page.$('#tosa-graph svg g.region[data-id="%1"]')) && !!(await nodeOf(page, '%2')), 'the cond_if is a region holding its op');

  // Search by op name and by SSA name; Enter goes to the match.
  await page.type('.tg-search', 'tosa.mul');
  let s = await page.evaluate(() => ({ status: document.querySelector('.tg-status').textContent,
    matches: [...document.querySelectorAll('#tosa-graph g.node.match')].map(g => g.getAttribute('data-id')) }));
  check(s.status === '1 match' && s.matches.join() === '%2', 'search by op name marks its node', JSON.stringify(s));
  await page.click('.tg-search', { count: 3 });
  await page.type('.tg-search', '%bad');
  await page.keyboard.press('Enter');
  s = await page.evaluate(() => ({ status: document.querySelector('.tg-status').textContent,
    current: [...document.querySelectorAll('#tosa-graph g.node.current')].map(g => g.getAttribute('data-id')) }));
  check(s.status === 'match 1 of 1' && s.current.join() === '%bad', 'search by SSA name, Enter: the match is current', JSON.stringify(s));
  await page.click('.tg-search', { count: 3 });
  await page.keyboard.press('Backspace');

  // Zoom in and out, fit, pan.
  let before = await button(page, 'in'), after = await state(page);
  check(Math.abs(after.k / before.k - 1.25) < 1e-6, '+ zooms in', `${before.k} -> ${after.k}`);
  before = await button(page, 'out');
  after = await state(page);
  check(Math.abs(after.k / before.k - 0.8) < 1e-6, '\u2212 zooms out', `${before.k} -> ${after.k}`);
  for (let i = 0; i < 6; i++) await button(page, 'in');
  const big = await fits(page);
  await button(page, 'fit');
  check(!big && await fits(page), 'Fit: the whole graph in view (it was not, zoomed in)');
  before = await state(page);
  const c = await page.evaluate(() => { const r = document.querySelector('.tg-canvas').getBoundingClientRect(); return { x: r.left + 5, y: r.bottom - 5 }; });
  await page.mouse.move(c.x, c.y);
  await page.mouse.down();
  for (let i = 1; i <= 5; i++) await page.mouse.move(c.x + 10 * i, c.y - 6 * i);
  await page.mouse.up();
  await new Promise(r => setTimeout(r, 100));
  after = await state(page);
  check(Math.abs(after.tx - before.tx - 50) < 1 && Math.abs(after.ty - before.ty + 30) < 1, 'a drag pans', JSON.stringify([before, after]));
  // A drag that starts on a node's text pans, and selects no text (the
  // browser's selection work on each move was most of a drag's frame).
  const t = await page.evaluate(() => {
    const r = document.querySelector('#tosa-graph g.node[data-id="%bad"] text.title').getBoundingClientRect();
    return { x: r.left + 2, y: r.top + r.height / 2 };
  });
  await page.mouse.move(t.x, t.y);
  await page.mouse.down();
  for (let i = 1; i <= 5; i++) await page.mouse.move(t.x + 40 * i, t.y + 3 * i);
  await page.mouse.up();
  const sel = await page.evaluate(() => ({ text: String(window.getSelection()), css: getComputedStyle(document.querySelector('.tg-canvas')).userSelect }));
  check(sel.text === '' && sel.css === 'none', 'a drag over text selects none of it', JSON.stringify(sel));

  // The cursor's node (the webview calls these on each cursor move).
  const cur = await page.evaluate(() => {
    const v = window.tosaGraphView, out = [];
    for (const p of [{ line: 2, character: 3 }, { line: 6, character: 20 }, { line: 3, character: 2 }]) {
      v.highlight(v.nodeAt(p), false);
      out.push([...document.querySelectorAll('#tosa-graph g.node.current')].map(g => g.getAttribute('data-id')).join());
    }
    return out;
  });
  check(cur.join(' ') === '%0 %2 %bad', 'the cursor on an op (or its result) highlights its node', JSON.stringify(cur));

  // Collapse all, expand all, a double-click folds a region.
  let n = +(await page.evaluate(() => document.querySelector('#tosa-graph').dataset.rendered));
  await button(page, 'collapse');
  await drawn(page, ++n);
  const folded = await nodeOf(page, '%1');
  check(folded && /\bcollapsed\b/.test(folded.cls) && folded.text.includes('3 ops inside') && !(await nodeOf(page, '%2')),
    'Collapse all: the region is one node saying what it holds', JSON.stringify(folded));
  await button(page, 'expand');
  await drawn(page, ++n);
  check(!!(await page.$('#tosa-graph svg g.region[data-id="%1"]')) && !!(await nodeOf(page, '%2')), 'Expand all: the region and its op again');
  const head = await page.$('#tosa-graph svg g.region[data-id="%1"] g.head text.title');
  await head.click({ count: 2 });
  await drawn(page, ++n);
  check(/\bcollapsed\b/.test(((await nodeOf(page, '%1')) || {}).cls), 'a double-click on the region folds it');
  await button(page, 'expand');
  await drawn(page, ++n);

  // An edit: the new model drawn where the view is, the new shape shown.
  const view = await state(page);
  graph(file('model2.mlir', MODEL.replace('tensor<3x2xf32>) -> tensor<2x3xf32>', 'tensor<3x2xf32>) -> tensor<7x3xf32>')),
    'json', path.join(outdir, 'model2.json'));
  const text = fs.readFileSync(path.join(outdir, 'model2.json'), 'utf8');
  await page.evaluate(t => window.tosaGraphView.update(t), text);
  await drawn(page, ++n);
  const edited = await nodeOf(page, '%bad'), again = await state(page);
  check(edited && edited.text.includes('%bad : 7x3xf32') && !edited.text.includes('2x3xf32'), 'an edited shape: the node says the new one', JSON.stringify(edited));
  check(again.tx === view.tx && again.ty === view.ty && again.k === view.k, 'the new model is drawn where the view was', JSON.stringify([view, again]));
  check(page.errors.length === 0, 'no page errors', JSON.stringify(page.errors));
  await page.screenshot({ path: path.join(outdir, 'graph-page.png') });
  await page.close();
}

async function bigPages(browser) {
  const big = path.join(outdir, 'big4k.mlir');
  gen(4100, big);
  graph(big, 'html', path.join(outdir, 'big4k.html'));
  let page = await open(browser, path.join(outdir, 'big4k.html'));
  await drawn(page);
  let d = await page.evaluate(() => ({ ...document.querySelector('#tosa-graph').dataset, elk: typeof ELK,
    shown: document.querySelectorAll('#tosa-graph svg g.node').length, note: document.querySelector('.tg-note').hidden }));
  check(+d.nodes > 4000 && d.shown > 0 && d.layoutBy === 'layered' && d.note, 'a 4,000-op function is drawn (layered.js, no note)', JSON.stringify(d));
  check(d.elk === 'undefined', 'ELK is not loaded for it', d.elk);
  // Edge labels (10 px) only where they are readable: not below 60%.
  const labels = () => page.evaluate(() => {
    const t = document.querySelector('#tosa-graph svg text.elabel');
    return { k: window.tosaGraphView.state().k, shown: !!t && getComputedStyle(t).display !== 'none' };
  });
  const low = await labels();
  await page.click('button[data-act="in"]');
  await page.click('button[data-act="in"]');
  await new Promise(r => setTimeout(r, 200));
  const high = await labels();
  check(low.k < 0.6 && !low.shown && high.k >= 0.6 && high.shown, 'a big graph\'s edge labels: hidden below 60% zoom, shown above', JSON.stringify([low, high]));
  check(page.errors.length === 0, 'no page errors (4,000 ops)', JSON.stringify(page.errors));
  await page.close();

  // The same as SVG (laid out by node): opens, every node in it.
  graph(big, 'svg', path.join(outdir, 'big4k.svg'));
  page = await open(browser, path.join(outdir, 'big4k.svg'), 'load');
  d = await page.evaluate(() => {
    const b = document.querySelector('svg').getBBox();
    return { nodes: document.querySelectorAll('g.node').length, w: Math.round(b.width), h: Math.round(b.height) };
  });
  check(d.nodes > 4000 && d.w > 500 && d.h > 5000, 'the 4,000-op SVG opens in Chromium, every node drawn', JSON.stringify(d));
  await page.screenshot({ path: path.join(outdir, 'graph-4k-svg.png') });
  check(page.errors.length === 0, 'no errors (SVG)', JSON.stringify(page.errors));
  await page.close();

  graph(file('regions.mlir', regions(600)), 'html', path.join(outdir, 'regions.html'));
  page = await open(browser, path.join(outdir, 'regions.html'));
  await drawn(page);
  d = await page.evaluate(() => ({ note: document.querySelector('.tg-note').hidden ? '' : document.querySelector('.tg-note').textContent,
    collapsed: document.querySelectorAll('#tosa-graph svg g.node.collapsed').length }));
  check(/too big to draw whole: only its top-level ops are shown, regions collapsed\.$/.test(d.note) && d.collapsed > 0,
    'over the node limit: regions collapsed, and the view says so', JSON.stringify(d));
  await page.close();

  const huge = path.join(outdir, 'big20k.mlir');
  gen(20000, huge);
  graph(huge, 'html', path.join(outdir, 'big20k.html'));
  page = await open(browser, path.join(outdir, 'big20k.html'));
  await drawn(page);
  d = await page.evaluate(() => ({ note: document.querySelector('.tg-note').textContent, nodes: +document.querySelector('#tosa-graph').dataset.nodes }));
  check(/and \d+ ops past the first 5000 are left out\./.test(d.note) && d.nodes > 0, 'a 20,000-op function: the first 5,000 nodes, the rest counted', JSON.stringify(d));
  check(page.errors.length === 0, 'no page errors (20,000 ops)', JSON.stringify(page.errors));
  await page.close();
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1200,900'],
    defaultViewport: { width: 1200, height: 900 }, protocolTimeout: 300000,
  });
  try {
    await smallPage(browser);
    await bigPages(browser);
  } catch (e) {
    check(false, 'the run', e && e.stack || String(e));
  } finally {
    await browser.close();
  }
  console.log(`graph-page: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
