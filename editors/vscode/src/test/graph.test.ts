import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { functionLines, graphErrorMessage, graphParams, isGraphResult, webviewHtml } from '../graph';

const root = path.join(__dirname, '..', '..');
const graphDir = path.join(root, '..', 'graph');

test('graph: tosa/graph params name the function once known, else the position', () => {
  assert.deepEqual(graphParams('file:///a.mlir', { position: { line: 3, character: 4 } }),
    { textDocument: { uri: 'file:///a.mlir' }, position: { line: 3, character: 4 } });
  assert.deepEqual(graphParams('file:///a.mlir', { function: 'f', position: { line: 3, character: 4 } }),
    { textDocument: { uri: 'file:///a.mlir' }, function: 'f' });
  // The toggle: the same function after the linalg stage.
  assert.deepEqual(graphParams('file:///a.mlir', { function: 'f', stage: 'linalg', mode: 'fast' }),
    { textDocument: { uri: 'file:///a.mlir' }, function: 'f', stage: 'linalg', mode: 'fast' });
  assert.deepEqual(graphParams('file:///a.mlir', { function: 'f', mode: 'fast' }),
    { textDocument: { uri: 'file:///a.mlir' }, function: 'f' });
  assert.equal(isGraphResult({ function: 'f', nodes: [], edges: [] }), true);
  assert.equal(isGraphResult({ text: 'x' }), false);
  assert.equal(isGraphResult(null), false);
});

test('graph: error responses become a message in the panel', () => {
  assert.equal(graphErrorMessage(new Error('no function at line 3')), 'no function at line 3');
  assert.equal(graphErrorMessage({ code: -32601, message: 'Unhandled method tosa/graph' }),
    'This tosa-lsp does not answer tosa/graph: update the server (tosaLsp.serverPath).');
});

test('graph: a code lens on each func.func, with its name and line', () => {
  const text = 'module {\n  func.func @a(%x: tensor<f32>) {\n    return\n  }\n  func.func private @"b c"() \n}\n// func.func @no\n';
  assert.deepEqual(functionLines(text), [
    { line: 1, name: 'a', character: 2 },
    { line: 4, name: 'b c', character: 2 },
  ]);
  assert.deepEqual(functionLines(''), []);
});

test('graph: the webview page loads only the extension\'s scripts, with a nonce', () => {
  const html = webviewHtml({ cspSource: 'vscode-resource:', nonce: 'N0', elkUri: 'vscode-resource:/elk.js', layeredUri: 'vscode-resource:/layered.js', viewUri: 'vscode-resource:/view.js', title: 't' });
  assert.match(html, /script-src vscode-resource: 'nonce-N0'/);
  assert.match(html, /default-src 'none'/);
  assert.match(html, /worker-src blob:/);
  assert.equal((html.match(/<script nonce="N0"/g) || []).length, 4);
  assert.doesNotMatch(html, /https?:/);
});

test('graph: the shared renderer draws a model in node (layout by ELK, errors red, regions, ? dims)', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ELK = require(path.join(graphDir, 'vendor', 'elk.bundled.js'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const G = require(path.join(graphDir, 'graph-view.js'));
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
  const node = (id: string, kind: string, label: string, extra = {}) =>
    ({ id, kind, label, results: kind === 'op' ? [id] : [], range: r, types: ['tensor<?x3xf32>'], inferred: [''], errors: [],
      broadcast: '', constant: false, constantBytes: 0, parent: null, ...extra });
  const model = {
    function: 'f', range: r, truncated: false,
    nodes: [node('%a', 'argument', '%a'), node('%c', 'op', 'tosa.const', { constant: true, constantBytes: 4096 }),
      node('%0', 'op', 'tosa.add', { errors: ['bad shapes'], broadcast: 'incompatible' }),
      node('%1', 'op', 'tosa.cond_if'), node('%2', 'op', 'tosa.abs', { parent: '%1', inferred: ['tensor<2x3xf32>'] })],
    edges: [{ from: '%a', to: '%0', value: '%a', type: 'tensor<?x3xf32>', dynamic: true, refinable: false },
      { from: '%c', to: '%0', value: '%c', type: 'tensor<2x3xf32>', dynamic: false, refinable: false },
      { from: '%0', to: '%2', value: '%0', type: 'tensor<?x3xf32>', dynamic: true, refinable: true }],
  };
  const svg: string = await G.renderSVG(model, new ELK());
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /<g class="node op error bc-incompatible" data-id="%0">/);
  assert.match(svg, /<g class="region op" data-id="%1">/);
  assert.match(svg, /<g class="node op inferred" data-id="%2">/);
  assert.match(svg, /<tspan class="dyn">\?<\/tspan>/);
  // The constant is folded into its consumer, with a size badge.
  assert.doesNotMatch(svg, /data-id="%c"/);
  assert.match(svg, /4.0 KB/);
  const view = G.prepare(model, new Set(['%1']));
  assert.deepEqual(view.nodes.map((v: { id: string }) => v.id), ['%a', '%0', '%1']);
  assert.deepEqual(view.edges.map((e: { from: string; to: string }) => `${e.from}->${e.to}`), ['%a->%0', '%0->%1']);
});

test('graph: a big function is laid out by layered.js, in layers, without overlaps', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const G = require(path.join(graphDir, 'graph-view.js'));
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
  const n = 600;
  const nodes: Record<string, unknown>[] = [{ id: '%a', kind: 'argument', label: '%a', results: [], range: r, types: ['tensor<2xf32>'], inferred: [''], errors: [],
    broadcast: '', constant: false, constantBytes: 0, parent: null }];
  const edges: { from: string; to: string; [k: string]: unknown }[] = [];
  for (let i = 0; i < n; i++) {
    nodes.push({ id: `%${i}`, kind: 'op', label: 'tosa.add', results: [`%${i}`], range: r, types: ['tensor<2xf32>'], inferred: [''],
      errors: i === 7 ? ['bad'] : [], broadcast: '', constant: false, constantBytes: 0, parent: null });
    // A chain, a skip connection, and the argument used all along.
    if (i) edges.push({ from: `%${i - 1}`, to: `%${i}`, value: `%${i - 1}`, type: 'tensor<2xf32>', dynamic: false, refinable: false });
    if (i > 2) edges.push({ from: `%${i - 3}`, to: `%${i}`, value: `%${i - 3}`, type: 'tensor<2xf32>', dynamic: false, refinable: false });
    edges.push({ from: '%a', to: `%${i}`, value: '%a', type: 'tensor<2xf32>', dynamic: false, refinable: false });
  }
  const model = { function: 'big', range: r, truncated: false, nodes, edges };
  const view = G.prepare(model, new Set());
  const laid = await G.layout(view, null);
  assert.equal(laid.fast, true);
  const pos = laid.pos;
  // Every edge goes down, and the chain makes one layer per op.
  for (const e of edges.slice(0, 50))
    assert.ok(pos.get(e.from).y + pos.get(e.from).h <= pos.get(e.to).y, `${e.from} above ${e.to}`);
  for (let i = 1; i < n; i++) assert.ok(pos.get(`%${i}`).y > pos.get(`%${i - 1}`).y);
  // No two nodes overlap.
  const boxes = [...pos.values()].sort((p, q) => p.y - q.y);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length && boxes[j].y < boxes[i].y + boxes[i].h; j++)
      assert.ok(boxes[i].x + boxes[i].w <= boxes[j].x || boxes[j].x + boxes[j].w <= boxes[i].x, 'overlap');
  // %a reaches far consumers through input nodes, drawn as the SVG's.
  assert.ok(laid.bands.some((b: { inputs: unknown[] }) => b.inputs.length > 0));
  const svg: string = await G.renderSVG(model, null);
  assert.match(svg, /<g class="node op error" data-id="%7">/);
  assert.match(svg, /class="node input"/);
});

test('graph: package.json contributes the command, its lens setting and the title button; the page ships', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.ok(pkg.contributes.commands.some((c: { command: string }) => c.command === 'tosaLsp.showGraph'));
  assert.ok(pkg.contributes.menus['editor/title'].some((c: { command: string }) => c.command === 'tosaLsp.showGraph'));
  assert.equal(pkg.contributes.configuration.properties['tosaLsp.graph.codeLens'].default, true);
  assert.equal(pkg.dependencies.elkjs, '0.12.1');
  assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /!dist\/graph\/\*\.js/);
});
