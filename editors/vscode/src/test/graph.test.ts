import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { functionLines, graphErrorMessage, graphParams, isGraphResult, PostedGraph, webviewHtml } from '../graph';

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

test('graph: the same graph text is posted once, again after the view showed something else', () => {
  const p = new PostedGraph();
  assert.equal(p.changed('{"version":1}'), true);
  assert.equal(p.changed('{"version":1}'), false); // a second publish of version 1
  assert.equal(p.changed('{"version":2}'), true);
  p.forget(); // an error shown, or the page reloaded
  assert.equal(p.changed('{"version":2}'), true);
});

test('graph: the page reads the compact tosa/graph result as the full model', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const G = require(path.join(graphDir, 'graph-view.js'));
  const wire = {
    function: 'f', range: [0, 0, 9, 1], truncated: false, uri: 'file:///x.mlir',
    types: ['', 'tensor<?x3xf32>', 'tensor<2x3xf32>'],
    nodes: [{ kind: 'argument', label: '%a', range: [0, 13, 0, 15], types: [2] },
      { label: 'tosa.add', results: ['%0'], range: [2, 7, 2, 15], types: [1], inferred: [2], broadcast: 'refinable', errors: ['bad'] },
      { id: '%1', label: 'tosa.cond_if', results: ['%1'], range: [3, 7, 3, 19], types: [1], collapsed: true },
      { id: '%2#2', label: 'tosa.abs', results: ['%2'], range: [4, 9, 4, 17], types: [1], parent: 2, constant: true, constantBytes: 8 },
      { id: 'return#0', kind: 'return', label: 'return', range: [8, 2, 8, 8] }],
    edges: [[0, 1, '%a', 2, 0], [1, 3, '%0', 1, 3], [2, 4, '%1', 1, 1]],
  };
  const m = G.decode(wire);
  assert.equal(m.types, undefined);
  assert.equal(m.uri, 'file:///x.mlir');
  assert.deepEqual(m.range, { start: { line: 0, character: 0 }, end: { line: 9, character: 1 } });
  assert.deepEqual(m.nodes.map((n: { id: string }) => n.id), ['%a', '%0', '%1', '%2#2', 'return#0']);
  assert.deepEqual(m.nodes[0], { id: '%a', kind: 'argument', label: '%a', results: [], range: { start: { line: 0, character: 13 }, end: { line: 0, character: 15 } },
    types: ['tensor<2x3xf32>'], inferred: [''], errors: [], broadcast: '', constant: false, constantBytes: 0, parent: null, collapsed: false });
  assert.deepEqual([m.nodes[1].kind, m.nodes[1].types, m.nodes[1].inferred, m.nodes[1].broadcast, m.nodes[1].errors],
    ['op', ['tensor<?x3xf32>'], ['tensor<2x3xf32>'], 'refinable', ['bad']]);
  assert.deepEqual([m.nodes[2].collapsed, m.nodes[3].parent, m.nodes[3].constant, m.nodes[3].constantBytes, m.nodes[4].kind, m.nodes[4].types],
    [true, '%1', true, 8, 'return', []]);
  assert.deepEqual(m.edges, [
    { from: '%a', to: '%0', value: '%a', type: 'tensor<2x3xf32>', dynamic: false, refinable: false },
    { from: '%0', to: '%2#2', value: '%0', type: 'tensor<?x3xf32>', dynamic: true, refinable: true },
    { from: '%1', to: 'return#0', value: '%1', type: 'tensor<?x3xf32>', dynamic: true, refinable: false }]);
  // The full form (a server before the compact one) is read as it is.
  assert.equal(G.decode(m), m);
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

test('graph: a big layout made in a worker is the page\'s own, after a structured clone with transfers', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const G = require(path.join(graphDir, 'graph-view.js'));
  const r = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
  const nodes: Record<string, unknown>[] = [];
  const edges: Record<string, unknown>[] = [];
  const op = (id: string, extra = {}) => ({ id, kind: 'op', label: 'tosa.exp', results: [id], range: r, types: ['tensor<2xf32>'],
    inferred: [''], errors: [], broadcast: '', constant: false, constantBytes: 0, parent: null, ...extra });
  nodes.push({ ...op('%a'), kind: 'argument', label: '%a', results: [] });
  for (let i = 0; i < 400; i++) {
    // Every 50th op a region holding one op: nested positions too.
    nodes.push(op(`%${i}`, i % 50 ? {} : { label: 'tosa.cond_if' }));
    if (i % 50 === 0) nodes.push(op(`%in${i}`, { parent: `%${i}` }));
    edges.push({ from: i ? `%${i - 1}` : '%a', to: `%${i}`, value: 'v', type: 'tensor<2xf32>', dynamic: i % 7 === 0, refinable: false });
    edges.push({ from: '%a', to: `%${i}`, value: '%a', type: 'tensor<2xf32>', dynamic: false, refinable: false });
  }
  const model = { function: 'big', range: r, truncated: false, nodes, edges };
  const collapsed = new Set(['%100']);
  // The worker's side, with postMessage's copy (and its transfer list).
  const replies: { seq: number; laid: unknown; error?: string }[] = [];
  const scope: { onmessage?: (e: { data: unknown }) => void; postMessage: (m: unknown, t?: ArrayBuffer[]) => void } = {
    postMessage: (m, transfer = []) => {
      if (!(m as { error?: string }).error) assert.ok(transfer.length > 0, 'the typed arrays are transferred');
      replies.push(structuredClone(m, { transfer }) as typeof replies[0]);
    },
  };
  G.serveLayouts(scope);
  scope.onmessage!({ data: structuredClone({ seq: 3, model, collapsed: [...collapsed] }) });
  assert.equal(replies.length, 1);
  assert.equal(replies[0].seq, 3);
  assert.equal(replies[0].error, undefined);
  const view = G.prepare(model, collapsed);
  const got = G.unpackLayout(view, replies[0].laid);
  const want = G.fastLayout(G.prepare(model, collapsed));
  assert.equal(got.width, want.width);
  assert.equal(got.height, want.height);
  assert.equal(got.bands.length, want.bands.length);
  type Band = { nodes: { v: { id: string }; x: number; y: number }[]; edges: { edge: { from: string; to: string }; pts: unknown[] }[]; inputs: { id: string; edge: { from: string } }[] };
  const flat = (bands: Band[]) => bands.map(b => ({
    nodes: b.nodes.map(n => [n.v.id, n.x, n.y]),
    edges: b.edges.map(e => [e.edge.from, e.edge.to, e.pts]),
    inputs: b.inputs.map(i => [i.id, i.edge.from]),
  }));
  assert.deepEqual(flat(got.bands), flat(want.bands));
  assert.deepEqual([...got.pos.keys()].sort(), [...want.pos.keys()].sort());
  // Every node drawn is the page's own object (its picture, its click).
  for (const b of got.bands as Band[]) for (const n of b.nodes) assert.equal(n.v, view.index.get(n.v.id));
  // A bad request is an error reply, not a dead worker.
  scope.onmessage!({ data: { seq: 4, model: null } });
  assert.equal(replies[1].seq, 4);
  assert.ok(replies[1].error);
  // layout() with a worker that fails lays out in the page, and says so.
  const failing = { layout: () => Promise.reject(new Error('refused')) };
  const here = await G.layout(G.prepare(model, collapsed), null, null, null, failing);
  assert.equal(here.where, 'page');
  const there = await G.layout(G.prepare(model, collapsed), null, null, null,
    { layout: (v: unknown) => Promise.resolve(G.unpackLayout(v, G.packLayout(G.fastLayout(v)).laid)) });
  assert.equal(there.where, 'worker');
  // No workers in node: none made.
  assert.equal(G.makeLayoutWorker(['a', 'b']), null);
});

test('graph: package.json contributes the command, its lens setting and the title button; the page ships', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.ok(pkg.contributes.commands.some((c: { command: string }) => c.command === 'tosaLsp.showGraph'));
  assert.ok(pkg.contributes.menus['editor/title'].some((c: { command: string }) => c.command === 'tosaLsp.showGraph'));
  assert.equal(pkg.contributes.configuration.properties['tosaLsp.graph.codeLens'].default, true);
  assert.equal(pkg.dependencies.elkjs, '0.12.1');
  assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /!dist\/graph\/\*\.js/);
});
