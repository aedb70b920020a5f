// A linear-time layered layout for big graphs (graph-view.js uses it above
// FAST_NODES nodes; ELK below). ELK's layered algorithm costs ~5 ms of CPU
// per node on a model-sized function (crossing minimisation, Brandes-Koepf
// placement): a 4,000-op function took 30 s in the webview. This one draws
// the same kind of picture -- top to bottom, one layer per step of the
// data flow, nested groups for regions -- in tens of milliseconds:
//
//   1. layers: longest path from the sources in text order (text order is
//      a topological order of a block), sources pulled down to just above
//      their first consumer (constants, arguments);
//   2. edges over up to MAX_SPAN layers get a dummy node per layer they
//      cross (they bend around nodes, as ELK's do); longer ones (an
//      argument used all along the function) enter near their consumers
//      through a small "input" node the caller draws, as ELK's bands do;
//   3. order within a layer: text order, then SWEEPS barycenter sweeps;
//   4. x: each node at the mean of its neighbours, overlaps pushed apart
//      from both sides and averaged (a cheap Brandes-Koepf).
//
// Every step is O(nodes + edges) per sweep (plus sorting a layer), with
// no DOM: node runs it for `tosa-lsp graph --format=svg` as the page does.
(function (root, factory) {
  if (typeof module === 'object' && module.exports)
    module.exports = factory();
  else
    root.TosaLayered = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  const MAX_SPAN = 6;     // longest edge given dummy nodes, in layers
  const SWEEPS = 4;       // barycenter sweeps (down, up, down, up)
  const DUMMY_W = 8;      // room an edge takes in a layer it crosses
  const GAP_X = 24, GAP_Y = 34;

  // One level of the hierarchy: `nodes` ({id, width, height, level}) in text
  // order, `edges` between them ({s, t, edge}); returns positions relative
  // to the level's origin and each edge's bend points.
  function layLevel(nodes, edges, opts) {
    const n0 = nodes.length;
    const index = new Map(nodes.map((v, i) => [v.id, i]));
    const all = nodes.map((v, i) => ({ id: v.id, w: v.width, h: v.height, order: i, preds: [], succs: [], layer: 0, real: true }));
    const fwd = [];
    const preds = all.map(() => []);
    for (const e of edges) {
      const s = index.get(e.s), t = index.get(e.t);
      if (s == null || t == null || s === t) continue;
      // A use before its definition (a region's back edge): no layering
      // constraint, drawn as it falls.
      fwd.push({ s, t, e, back: s > t });
      if (s < t) preds[t].push(s);
    }
    // 1. Layers.
    for (let i = 0; i < n0; i++)
      for (const p of preds[i]) all[i].layer = Math.max(all[i].layer, all[p].layer + 1);
    const firstUse = new Array(n0).fill(Infinity);
    for (const f of fwd) if (!f.back) firstUse[f.s] = Math.min(firstUse[f.s], all[f.t].layer);
    for (let i = 0; i < n0; i++)
      if (!preds[i].length && firstUse[i] !== Infinity) all[i].layer = firstUse[i] - 1;
    // 2. Long edges: dummies, or an input node near the consumers. The
    // links the sweeps and placement follow are the chains' steps.
    const routes = [];
    const inputs = new Map(); // key -> the open input node {node, layer}
    const addNode = (v) => { all.push(v); return all.length - 1; };
    const link = (a, b) => { all[a].succs.push(b); all[b].preds.push(a); };
    for (const f of fwd) {
      if (f.back) { routes.push({ e: f.e, chain: [f.s, f.t] }); continue; }
      let s = f.s;
      const t = f.t;
      let input = null;
      if (all[t].layer - all[s].layer > MAX_SPAN && opts.farInput) {
        const far = opts.farInput(f.e.edge);
        let open = inputs.get(far.key);
        if (!open || all[t].layer - open.layer > MAX_SPAN || all[t].layer <= open.layer) {
          const layer = all[t].layer - 1;
          const id = addNode({ id: 'in:' + far.key + ':' + layer, w: far.width, h: far.height, order: all[t].order - 0.5, preds: [], succs: [], layer, real: false, input: far, from: f.s, edges: [] });
          open = { node: id, layer };
          inputs.set(far.key, open);
        }
        input = open.node;
        all[input].edges.push(f.e);
        s = input;
      }
      const chain = [s];
      let prev = s;
      for (let l = all[s].layer + 1; l < all[t].layer; l++) {
        const d = addNode({ id: null, w: DUMMY_W, h: 0, order: all[prev].order + 0.25, preds: [], succs: [], layer: l, real: false });
        link(prev, d);
        chain.push(d);
        prev = d;
      }
      link(prev, t);
      chain.push(t);
      routes.push({ e: f.e, chain, input });
    }
    // 3. Order within layers.
    let nLayers = 0;
    for (const v of all) nLayers = Math.max(nLayers, v.layer + 1);
    const layers = Array.from({ length: nLayers }, () => []);
    const byOrder = all.map((v, i) => i).sort((a, b) => all[a].order - all[b].order);
    for (const i of byOrder) layers[all[i].layer].push(i);
    const pos = new Float64Array(all.length);
    const number = () => { for (const L of layers) L.forEach((i, k) => { pos[i] = k; }); };
    number();
    const key = new Float64Array(all.length);
    for (let sweep = 0; sweep < SWEEPS; sweep++) {
      const down = sweep % 2 === 0;
      for (let li = down ? 1 : nLayers - 2; down ? li < nLayers : li >= 0; li += down ? 1 : -1) {
        const L = layers[li];
        for (const i of L) {
          const nb = down ? all[i].preds : all[i].succs;
          let sum = 0, c = 0;
          for (const j of nb) if (all[j].layer === li + (down ? -1 : 1)) { sum += pos[j]; c++; }
          key[i] = c ? sum / c : pos[i];
        }
        L.sort((a, b) => key[a] - key[b] || pos[a] - pos[b]);
        L.forEach((i, k) => { pos[i] = k; });
      }
    }
    // 4. Coordinates.
    const x = new Float64Array(all.length); // centres
    const layerY = new Float64Array(nLayers), layerH = new Float64Array(nLayers);
    for (const v of all) layerH[v.layer] = Math.max(layerH[v.layer], v.h);
    for (let l = 1; l < nLayers; l++) layerY[l] = layerY[l - 1] + layerH[l - 1] + GAP_Y;
    // First guess: packed left to right.
    for (const L of layers) {
      let right = 0;
      for (const i of L) { x[i] = right + all[i].w / 2; right += all[i].w + GAP_X; }
    }
    const want = new Float64Array(all.length);
    const place = (L) => {
      // Each node as near its wish as the order allows: packed from the
      // left, from the right, and the mean of both (then packed again).
      const m = L.length;
      if (!m) return;
      const a = new Float64Array(m), b = new Float64Array(m);
      for (let k = 0; k < m; k++) {
        const i = L[k], lo = k ? a[k - 1] + (all[L[k - 1]].w + all[i].w) / 2 + GAP_X : -Infinity;
        a[k] = Math.max(want[i], lo);
      }
      for (let k = m - 1; k >= 0; k--) {
        const i = L[k], hi = k < m - 1 ? b[k + 1] - (all[L[k + 1]].w + all[i].w) / 2 - GAP_X : Infinity;
        b[k] = Math.min(want[i], hi);
      }
      for (let k = 0; k < m; k++) {
        const i = L[k], lo = k ? x[L[k - 1]] + (all[L[k - 1]].w + all[i].w) / 2 + GAP_X : -Infinity;
        x[i] = Math.max((a[k] + b[k]) / 2, lo);
      }
    };
    const wish = (i, usePreds, useSuccs) => {
      let sum = 0, c = 0;
      if (usePreds) for (const j of all[i].preds) { sum += x[j]; c++; }
      if (useSuccs) for (const j of all[i].succs) { sum += x[j]; c++; }
      return c ? sum / c : x[i];
    };
    for (let pass = 0; pass < 3; pass++) {
      const down = pass !== 1;
      for (let li = down ? 0 : nLayers - 1; down ? li < nLayers : li >= 0; li += down ? 1 : -1) {
        const L = layers[li];
        for (const i of L) want[i] = wish(i, down || pass === 1, !down || pass === 2);
        place(L);
      }
    }
    let minX = Infinity, maxX = -Infinity;
    for (const v of all.keys()) { minX = Math.min(minX, x[v] - all[v].w / 2); maxX = Math.max(maxX, x[v] + all[v].w / 2); }
    if (!all.length) minX = maxX = 0;
    const out = new Map(), inputNodes = [];
    for (let i = 0; i < all.length; i++) {
      const v = all[i];
      const p = { x: x[i] - v.w / 2 - minX, y: layerY[v.layer] + (layerH[v.layer] - v.h) / 2, w: v.w, h: v.h };
      if (v.real) out.set(v.id, p);
      else if (v.input) inputNodes.push({ ...p, id: v.id, input: v.input, from: all[v.from].id, edges: v.edges });
    }
    // Through each layer an edge crosses: straight down, top to bottom.
    const bends = routes.map(r => {
      const pts = [];
      for (const i of r.chain.slice(1, -1)) {
        if (all[i].input) continue;
        const l = all[i].layer;
        pts.push({ x: x[i] - minX, y: layerY[l] }, { x: x[i] - minX, y: layerY[l] + layerH[l] });
      }
      return { e: r.e, input: r.input != null ? all[r.input].id : null, pts };
    });
    const height = nLayers ? layerY[nLayers - 1] + layerH[nLayers - 1] : 0;
    return { width: Math.max(0, maxX - minX), height, pos: out, inputs: inputNodes, routes: bends };
  }

  // Lays out `graph`: {children: [{id, width, height, children?, pad}],
  // edges: [{id, source, target}]} (`pad`: {top, left, bottom, right} of a
  // group); `opts.farInput(edge)` -> {key, width, height} names the input
  // node an edge longer than MAX_SPAN layers enters through (edges of one
  // key share it). Returns absolute positions: {width, height, pos: Map id
  // -> {x, y, w, h}, edges: [{edge, pts}], inputs: [{id, x, y, w, h,
  // input, from, edges}]}.
  function layout(graph, opts) {
    opts = opts || {};
    const parentOf = new Map(), nodeOf = new Map();
    const walk = (list, parent) => {
      for (const c of list || []) {
        parentOf.set(c.id, parent);
        nodeOf.set(c.id, c);
        walk(c.children, c.id);
      }
    };
    walk(graph.children, null);
    // Each edge at the level where its ends part: between the children of
    // their deepest common group.
    const depth = id => { let d = 0; for (let p = parentOf.get(id); p != null; p = parentOf.get(p)) d++; return d; };
    const perLevel = new Map(); // group id (null: top) -> [{s, t, edge}]
    const direct = [];
    for (const e of graph.edges || []) {
      let a = e.source, b = e.target;
      if (!nodeOf.has(a) || !nodeOf.has(b)) continue;
      let da = depth(a), db = depth(b);
      while (da > db) { a = parentOf.get(a); da--; }
      while (db > da) { b = parentOf.get(b); db--; }
      while (parentOf.get(a) !== parentOf.get(b)) { a = parentOf.get(a); b = parentOf.get(b); }
      if (a === b) { direct.push({ edge: e, pts: [] }); continue; } // into its own group
      const level = parentOf.get(a);
      if (!perLevel.has(level)) perLevel.set(level, []);
      perLevel.get(level).push({ s: a, t: b, edge: e });
    }
    const rel = new Map(); // id -> position relative to its group's origin
    const levels = [];     // [{group, result}] innermost first
    const size = (c) => {
      if (!c.children || !c.children.length) return;
      for (const k of c.children) size(k);
      const pad = c.pad || { top: 20, left: 10, bottom: 10, right: 10 };
      const r = layLevel(c.children.map(k => ({ id: k.id, width: k.width, height: k.height })), perLevel.get(c.id) || [], opts);
      c.width = Math.max(c.width || 0, r.width + pad.left + pad.right);
      c.height = r.height + pad.top + pad.bottom;
      // Contents centred in a group wider than they are (its title).
      r.offset = { x: pad.left + Math.max(0, (c.width - pad.left - pad.right - r.width) / 2), y: pad.top };
      levels.push({ group: c.id, r });
    };
    for (const c of graph.children || []) size(c);
    const top = layLevel((graph.children || []).map(k => ({ id: k.id, width: k.width, height: k.height })), perLevel.get(null) || [], opts);
    top.offset = { x: 0, y: 0 };
    levels.push({ group: null, r: top });
    const originOf = new Map([[null, { x: 0, y: 0 }]]);
    const pos = new Map(), edges = [], inputs = [];
    // Outermost first: a group's origin is known before its contents.
    for (let li = levels.length - 1; li >= 0; li--) {
      const { group, r } = levels[li];
      const o = originOf.get(group);
      const ox = o.x + r.offset.x, oy = o.y + r.offset.y;
      for (const [id, p] of r.pos) {
        const q = { x: p.x + ox, y: p.y + oy, w: p.w, h: nodeOf.get(id).height };
        pos.set(id, q);
        originOf.set(id, { x: q.x, y: q.y });
      }
      for (const input of r.inputs) inputs.push({ ...input, x: input.x + ox, y: input.y + oy });
      for (const b of r.routes) edges.push({ edge: b.e.edge, input: b.input, pts: b.pts.map(p => ({ x: p.x + ox, y: p.y + oy })) });
    }
    edges.push(...direct);
    // End points on the nodes themselves (a group's contents included).
    const inputAt = new Map(inputs.map(i => [i.id, i]));
    for (const e of edges) {
      const a = e.input ? inputAt.get(e.input) : pos.get(e.edge.source), b = pos.get(e.edge.target);
      if (!a || !b) continue;
      const clamp = (n, v) => Math.min(n.x + n.w - 4, Math.max(n.x + 4, v));
      const first = e.pts[0], last = e.pts[e.pts.length - 1];
      const start = { x: first ? clamp(a, first.x) : a.x + a.w / 2, y: a.y + a.h };
      const end = { x: last ? clamp(b, last.x) : b.x + b.w / 2, y: b.y };
      e.pts = [start, ...e.pts, end];
    }
    return { width: top.width, height: top.height, pos, edges, inputs };
  }

  return { layout, MAX_SPAN };
});
