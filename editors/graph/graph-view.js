// The graph view of one TOSA function, shared by the VS Code webview, the
// HTML page `tosa-lsp graph --format=html` writes and the SVG it writes
// through node (render.js): one layout and one picture everywhere.
//
// Input: the `tosa/graph` result (server/GraphJSON.h). Layout: elkjs'
// layered algorithm, top to bottom, run per band of consecutive top-level
// nodes (text order is a topological order of a block): ELK's time grows
// with the graph, and bands let the first screen show while the rest is
// laid out, keep each call short, and bound the page's work per band.
// Values that cross bands enter a band through a small "input" node.
//
// Plain ES2020, no DOM needed for layout and SVG text (node uses them);
// mount() adds the interactive view (pan, zoom, fit, search, regions).
(function (root, factory) {
  if (typeof module === 'object' && module.exports)
    module.exports = factory(require('./layered.js'));
  else
    root.TosaGraph = factory(root.TosaLayered);
})(typeof self !== 'undefined' ? self : this, function (Layered) {
  'use strict';

  // Monospace metrics shared by layout and drawing: no text measuring, so
  // node (no DOM) lays out exactly as the page does.
  const CHAR_W = 7.2, LINE_H = 15, PAD_X = 10, PAD_Y = 6;
  const BAND = 120;         // top-level nodes per ELK call
  // Above this many nodes the layout is layered.js's (linear time, tens of
  // ms for 4,000 ops) instead of ELK's (~5 ms per node): ELK's picture is
  // a little tidier, and below this it takes at most a second or so.
  const FAST_NODES = 250;
  const STRIPE = 800;       // height of a drawn band of a fast layout
  const FAR_K = 0.35;       // below this zoom: no text (a big graph: a canvas)
  const BAND_GAP = 60;      // between bands
  const BIG_CONST = 1024;   // bytes of a folded constant worth a badge
  const SLICE_MS = 6;       // the page's work between two chances of a frame
  const MAX_LABEL = 48;     // characters of a type shown in a node

  const ELK_OPTIONS = {
    'elk.algorithm': 'layered',
    'elk.direction': 'DOWN',
    'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
    'elk.edgeRouting': 'POLYLINE',
    'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    'elk.layered.spacing.nodeNodeBetweenLayers': '34',
    'elk.spacing.nodeNode': '24',
    'elk.json.shapeCoords': 'ROOT',
    'elk.json.edgeCoords': 'ROOT',
  };

  // More than one band: crossing minimisation off (about 40% of ELK's time
  // on a 4,000-op model); the nodes keep their text order instead.
  const ELK_BIG = { 'elk.layered.crossingMinimization.strategy': 'NONE' };

  const CSS = `
.tosa-graph-root{position:relative;display:flex;flex-direction:column;height:100%;min-height:300px;font-family:var(--vscode-editor-font-family,monospace);color:var(--vscode-foreground,#222);background:var(--vscode-editor-background,#fff)}
.tosa-graph-page{margin:0;height:100vh}
.tosa-graph-page #tosa-graph{height:100vh}
.tg-bar{display:flex;gap:6px;align-items:center;padding:4px 6px;border-bottom:1px solid var(--vscode-panel-border,#ccc);font-size:12px;flex-wrap:wrap}
.tg-bar input{width:14em;font:inherit;color:inherit;background:var(--vscode-input-background,#fff);border:1px solid var(--vscode-input-border,#aaa);padding:2px 4px}
.tg-bar button{font:inherit;color:var(--vscode-button-secondaryForeground,#222);background:var(--vscode-button-secondaryBackground,#eee);border:1px solid var(--vscode-panel-border,#bbb);padding:1px 7px;cursor:pointer}
.tg-bar button[aria-pressed=true]{color:var(--vscode-button-foreground,#fff);background:var(--vscode-button-background,#0969da)}
.tg-status{opacity:.85;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tg-note{padding:3px 8px;background:var(--vscode-inputValidation-warningBackground,#fff4ce);border-bottom:1px solid var(--vscode-inputValidation-warningBorder,#e0b000);font-size:12px}
.tg-error{padding:12px;font-size:13px;color:var(--vscode-errorForeground,#b00020);white-space:pre-wrap}
.tg-canvas{flex:1;overflow:hidden;position:relative;cursor:grab;touch-action:none}
.tg-canvas.panning{cursor:grabbing}
.tg-canvas svg{position:absolute;left:0;top:0;overflow:visible;transform-origin:0 0}
.tg-canvas .tg-sketch{position:absolute;left:0;top:0}
${svgCSS()}`;

  // What the picture needs in every host, the standalone SVG included.
  function svgCSS() {
    return `
.tosa-graph text{font-family:var(--vscode-editor-font-family,ui-monospace,Menlo,Consolas,monospace);font-size:12px;fill:var(--vscode-foreground,#222)}
.tosa-graph .node rect{fill:var(--vscode-editorWidget-background,#f6f8fa);stroke:var(--vscode-editorWidget-border,#8a8f98);stroke-width:1;rx:4}
.tosa-graph .node.argument rect,.tosa-graph .node.return rect,.tosa-graph .node.input rect{rx:12;fill:var(--vscode-badge-background,#e4ecf7);fill-opacity:.5}
.tosa-graph .node.input rect{stroke-dasharray:3 2}
.tosa-graph .node .title{font-weight:bold}
.tosa-graph .node.inferred rect{stroke:#c28a00;stroke-width:2;stroke-dasharray:6 3}
.tosa-graph .node .inf{fill:#a66f00}
.tosa-graph .node.error rect{fill:#fde8e8;stroke:#d11;stroke-width:2}
.tosa-graph .node.error text{fill:#a00}
.tosa-graph .node .err{fill:#d11}
.tosa-graph .node.bc-incompatible .title{fill:#d11}
.tosa-graph .node.bc-runtime-check .title{fill:#8250df}
.tosa-graph .dyn{fill:#c25e00;font-weight:bold}
.tosa-graph .badge rect{fill:#6e7781;rx:6}
.tosa-graph .badge text{fill:#fff;font-size:10px}
.tosa-graph .region>rect{fill:var(--vscode-editor-background,#fff);fill-opacity:.6;stroke:var(--vscode-editorWidget-border,#8a8f98);stroke-dasharray:4 3;rx:6}
.tosa-graph .region.error>rect{stroke:#d11}
.tosa-graph .region .title{font-weight:bold}
.tosa-graph .edge{fill:none;stroke:#8a8f98;stroke-width:1.2;marker-end:url(#tg-arrow)}
.tosa-graph .edge.dynamic{stroke:#c25e00}
.tosa-graph .edge.refinable{stroke-dasharray:5 3}
.tosa-graph .edge.far{stroke-opacity:.45}
.tosa-graph .elabel{font-size:10px;paint-order:stroke;stroke:var(--vscode-editor-background,#fff);stroke-width:3px}
.tosa-graph #tg-arrow path{fill:#8a8f98}
.tosa-graph .node.match rect{stroke:#0969da;stroke-width:3}
.tosa-graph .node.current rect,.tosa-graph .region.current>rect{stroke:#0969da;stroke-width:3;fill:#ddf4ff}
.tosa-graph .node,.tosa-graph .region .head{cursor:pointer}
.tosa-graph.far text{display:none}`;
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }
  function shapeOf(type) {
    const m = /^tensor<(.*)>$/.exec(type || '');
    return m ? m[1] : type || '';
  }
  function clip(s) {
    return s.length > MAX_LABEL ? s.slice(0, MAX_LABEL - 1) + '\u2026' : s;
  }
  // Escaped text with each `?` (and unranked `*`) in a tspan of its own.
  function dimSpans(s) {
    return esc(s).replace(/[?*]/g, m => `<tspan class="dyn">${m}</tspan>`);
  }
  function bytesText(n) {
    return n >= 1 << 20 ? (n / (1 << 20)).toFixed(1) + ' MB' : n >= 1024 ? (n / 1024).toFixed(1) + ' KB' : n + ' B';
  }

  // A named span for the page's performance observers (DevTools; the
  // bench attributes long tasks with them); just `f()` where there are
  // none. Not kept in the timeline: a pan makes one per frame.
  function timed(name, f) {
    if (typeof performance === 'undefined' || !performance.measure || !performance.clearMeasures) return f();
    const t0 = performance.now();
    try {
      return f();
    } finally {
      performance.measure('tosa-graph:' + name, { start: t0 });
      performance.clearMeasures('tosa-graph:' + name);
    }
  }

  // The `tosa/graph` result as sent (server/GraphJSON.h: defaults left
  // out, types by index in `types`, ranges [l, c, l, c], edges [from, to,
  // value, type, flags] by node index) as one object per node and edge
  // with every field, which the rest of this file reads. A model already
  // in that form (no `types` table: another server) is returned as it is.
  function decode(model) {
    return run(decodeSteps(model));
  }
  // decode()'s work, yielding now and then (the page runs it sliced).
  function* decodeSteps(model) {
    if (!model || !Array.isArray(model.types)) return model;
    const types = model.types;
    const type = i => (typeof i === 'number' && types[i]) || '';
    const range = r => (Array.isArray(r) ? { start: { line: r[0], character: r[1] }, end: { line: r[2], character: r[3] } } : r);
    const wire = model.nodes || [];
    const nodes = [];
    for (const n of wire) {
      if (nodes.length % 512 === 511) yield;
      const results = n.results || [];
      const declared = (n.types || []).map(type);
      nodes.push({
        id: n.id != null ? n.id : results.length ? results[0] : n.label,
        kind: n.kind || 'op', label: n.label, results, range: range(n.range),
        types: declared, inferred: n.inferred ? n.inferred.map(type) : declared.map(() => ''),
        errors: n.errors || [], broadcast: n.broadcast || '', constant: !!n.constant,
        constantBytes: n.constantBytes || 0, parent: n.parent, collapsed: !!n.collapsed,
      });
    }
    for (const n of nodes) n.parent = typeof n.parent === 'number' && nodes[n.parent] ? nodes[n.parent].id : null;
    const edges = [];
    for (const e of model.edges || []) {
      if (edges.length % 1024 === 1023) yield;
      const from = nodes[e[0]], to = nodes[e[1]];
      if (!from || !to) continue;
      edges.push({ from: from.id, to: to.id, value: e[2], type: type(e[3]), dynamic: !!(e[4] & 1), refinable: !!(e[4] & 2) });
    }
    const out = { ...model, range: range(model.range), nodes, edges };
    delete out.types;
    return out;
  }

  // A generator's steps run to its result at once.
  function run(steps) {
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
    }
  }
  const now = () => (typeof performance !== 'undefined' && performance.now ? performance.now() : Date.now());
  // The same on the page, in slices of a few ms, each a task of its own:
  // frames come between them (4,000 nodes take tens of ms in all, several
  // times that on a loaded machine). Null once `alive()` is false.
  async function sliced(name, steps, alive) {
    let t0 = now();
    for (;;) {
      const r = timed(name, () => steps.next());
      if (r.done) return r.value;
      if (now() - t0 < SLICE_MS) continue;
      await nextTask();
      if (alive && !alive()) return null;
      t0 = now();
    }
  }

  // The model as drawn: constants folded into their consumers, regions
  // collapsed as asked (`collapsed`: a Set of region op ids), each node's
  // lines of text and size.
  function prepare(model, collapsed) {
    return run(prepareSteps(model, collapsed));
  }
  // prepare()'s work, yielding now and then (the caller decides whether
  // to let the page run).
  function* prepareSteps(model, collapsed) {
    const nodes = model.nodes || [], edges = model.edges || [];
    const byId = new Map(nodes.map(n => [n.id, n]));
    const children = new Map();
    yield;
    for (const n of nodes)
      if (n.parent != null && byId.has(n.parent)) {
        if (!children.has(n.parent)) children.set(n.parent, []);
        children.get(n.parent).push(n.id);
      }
    const uses = new Map();
    let k = 0;
    for (const e of edges) {
      if (++k % 2048 === 0) yield;
      if (!uses.has(e.from)) uses.set(e.from, []);
      uses.get(e.from).push(e);
    }
    // A constant without errors whose uses all have a node is drawn as a
    // line of each consumer (Model Explorer and Netron do the same).
    const folded = new Map(); // consumer id -> constants
    const isFolded = new Set();
    for (const n of nodes)
      if (n.constant && n.kind === 'op' && !(n.errors || []).length && (uses.get(n.id) || []).length) {
        isFolded.add(n.id);
        n.foldedType = uses.get(n.id)[0].type;
        for (const e of uses.get(n.id)) {
          if (!folded.has(e.to)) folded.set(e.to, []);
          folded.get(e.to).push(n);
        }
      }
    // Declared types, from the edges where the model has none (ops that
    // are neither Broadcastable nor inferred).
    const typesOf = n => {
      if ((n.types || []).some(t => t)) return n.types;
      return (n.results || []).map(r => ((uses.get(n.id) || []).find(e => e.value === r) || {}).type || '');
    };
    // What each node is drawn as: itself, its nearest collapsed ancestor,
    // or nothing (a folded constant).
    yield;
    const shownAs = new Map();
    for (const n of nodes) {
      if (isFolded.has(n.id)) continue;
      let as = n.id;
      for (let p = n.parent, guard = 0; p != null && byId.has(p) && guard < 1000; p = byId.get(p).parent, guard++)
        if (collapsed.has(p)) as = p;
      shownAs.set(n.id, as);
    }
    // `collapsed` kept: a layout worker prepares the same view from it.
    const view = { model, collapsed: [...collapsed], byId, nodes: [], index: new Map(), edges: [], children: new Map(), top: [] };
    yield;
    for (const n of nodes) {
      if (++k % 64 === 0) yield;
      if (shownAs.get(n.id) !== n.id) continue;
      const kids = (children.get(n.id) || []).filter(c => shownAs.get(c) === c);
      const v = describe(n, typesOf(n), folded.get(n.id) || [], collapsed.has(n.id) || (n.collapsed && !kids.length),
        (children.get(n.id) || []).length);
      v.kids = kids;
      v.parent = n.parent != null && shownAs.get(n.parent) === n.parent ? n.parent : null;
      v.n = view.nodes.length;
      view.nodes.push(v);
      view.index.set(n.id, v);
      if (v.parent == null) view.top.push(v);
    }
    const seen = new Set();
    for (const e of edges) {
      if (++k % 1024 === 0) yield;
      const from = shownAs.get(e.from), to = shownAs.get(e.to);
      if (from == null || to == null || from === to) continue;
      const key = from + '\u0000' + to + '\u0000' + e.value;
      if (seen.has(key)) continue;
      seen.add(key);
      view.edges.push({ ...e, from, to, i: view.edges.length });
    }
    return view;
  }

  // A node's lines of text and size.
  function describe(n, types, consts, isCollapsed, nKids) {
    const lines = [];
    const title = n.kind === 'argument' ? n.label : n.kind === 'return' ? 'return' : n.label;
    lines.push({ cls: 'title', text: title });
    const inferred = n.inferred || [], results = n.results || [];
    let refined = false;
    types.forEach((t, i) => {
      const name = n.kind === 'op' && results[i] ? results[i] + ' : ' : '';
      if (t) lines.push({ cls: 'type', text: clip(name + shapeOf(t)), dims: true });
      if (inferred[i]) {
        refined = true;
        lines.push({ cls: 'inf', text: clip('\u2192 inferred ' + shapeOf(inferred[i])), dims: true });
      }
    });
    const typesOf = c => (c.types || []).some(t => t) ? c.types : [c.foldedType || ''];
    for (const c of consts)
      lines.push({ cls: 'const', text: clip('\u25c6 ' + (c.results && c.results[0] || c.id) + ' : ' + shapeOf(typesOf(c)[0] || '')), dims: true });
    const errors = n.errors || [];
    for (const e of errors.slice(0, 2)) lines.push({ cls: 'err', text: clip('\u2716 ' + e) });
    if (errors.length > 2) lines.push({ cls: 'err', text: `\u2716 ${errors.length - 2} more` });
    if (isCollapsed && nKids) lines.push({ cls: 'more', text: `\u25b8 ${nKids} ops inside (double-click: expand)` });
    else if (isCollapsed && n.collapsed) lines.push({ cls: 'more', text: '\u25b8 region left out (graph too big)' });
    const big = consts.filter(c => c.constantBytes >= BIG_CONST);
    const badge = big.length ? bytesText(big.reduce((s, c) => s + c.constantBytes, 0)) : '';
    const chars = Math.max(...lines.map(l => l.text.length), badge.length + title.length + 3);
    const cls = ['node', n.kind];
    if (errors.length) cls.push('error');
    if (refined) cls.push('inferred');
    if (n.broadcast) cls.push('bc-' + n.broadcast);
    return {
      id: n.id, src: n, lines, badge, consts, collapsed: isCollapsed, cls,
      width: Math.ceil(chars * CHAR_W + 2 * PAD_X), height: lines.length * LINE_H + 2 * PAD_Y,
    };
  }

  // The bands: consecutive top-level nodes, BAND at a time.
  function bands(view) {
    const out = [];
    for (let i = 0; i < view.top.length; i += BAND) out.push(view.top.slice(i, i + BAND));
    return out;
  }

  // The ELK graph of one band: its nodes (regions with their contents),
  // the edges inside it, and an input node per value from an earlier band.
  function elkBand(view, band, k, bandOf) {
    const members = new Set();
    const addTree = v => { members.add(v.id); for (const c of v.kids) addTree(view.index.get(c)); };
    band.forEach(addTree);
    const toElk = v => {
      const node = { id: v.id, width: v.width, height: v.height };
      if (v.kids.length && !v.collapsed) {
        node.children = v.kids.map(c => toElk(view.index.get(c)));
        node.layoutOptions = { 'elk.padding': `[top=${v.height + 8},left=10,bottom=10,right=10]` };
        delete node.height;
        node.width = v.width;
      }
      return node;
    };
    const children = band.map(toElk);
    const edges = [], inputs = new Map(), crossing = [];
    view.edges.forEach((e, i) => {
      if (!members.has(e.to)) return;
      if (members.has(e.from)) {
        edges.push({ id: 'e' + i, sources: [e.from], targets: [e.to], index: i });
        return;
      }
      if (bandOf.get(topOf(view, e.from)) >= k) return; // a back edge: not in SSA
      const inId = `in:${k}:${e.from}:${e.value}`;
      if (!inputs.has(inId)) {
        const label = clip(e.value + ' : ' + shapeOf(e.type));
        inputs.set(inId, { id: inId, width: Math.ceil(label.length * CHAR_W + 2 * PAD_X), height: LINE_H + 2 * PAD_Y, label, edge: e });
        crossing.push({ from: e.from, to: inId, edge: e });
      }
      edges.push({ id: 'e' + i, sources: [inId], targets: [e.to], index: i });
    });
    for (const input of inputs.values()) children.unshift({ id: input.id, width: input.width, height: input.height });
    const layoutOptions = view.top.length > BAND ? { ...ELK_OPTIONS, ...ELK_BIG } : ELK_OPTIONS;
    return { graph: { id: 'band' + k, layoutOptions, children, edges }, inputs, crossing };
  }

  function topOf(view, id) {
    let v = view.index.get(id);
    while (v && v.parent != null) v = view.index.get(v.parent);
    return v ? v.id : id;
  }

  // layered.js' layout of the whole view, cut into bands by height (what
  // the page draws and culls): nodes by their top-level node's place,
  // edges with their consumer, long edges entering through input nodes.
  function fastLayout(view) {
    const toNode = v => {
      const node = { id: v.id, width: v.width, height: v.height };
      if (v.kids.length && !v.collapsed) {
        node.children = v.kids.map(c => toNode(view.index.get(c)));
        node.pad = { top: v.height + 8, left: 10, bottom: 10, right: 10 };
      }
      return node;
    };
    const graph = {
      children: view.top.map(toNode),
      edges: view.edges.map((e, i) => ({ id: 'e' + i, source: e.from, target: e.to, index: i })),
    };
    const r = Layered.layout(graph, {
      farInput: ge => {
        const e = view.edges[ge.index];
        const label = clip(e.value + ' : ' + shapeOf(e.type));
        return { key: e.from + '\u0000' + e.value, width: Math.ceil(label.length * CHAR_W + 2 * PAD_X), height: LINE_H + 2 * PAD_Y, label, edge: e };
      },
    });
    const pos = r.pos;
    const bandAt = new Map(); // stripe number -> band
    const bandOfY = y => {
      const k = Math.max(0, Math.floor(y / STRIPE));
      if (!bandAt.has(k)) bandAt.set(k, { k, y: Infinity, bottom: -Infinity, width: r.width, nodes: [], edges: [], inputs: [], crossing: [] });
      return bandAt.get(k);
    };
    const grow = (b, y0, y1) => { b.y = Math.min(b.y, y0); b.bottom = Math.max(b.bottom, y1); };
    for (const v of view.top) {
      const b = bandOfY(pos.get(v.id).y);
      const add = (u) => {
        const p = pos.get(u.id);
        b.nodes.push({ v: u, ...p });
        grow(b, p.y, p.y + p.h);
        if (u.kids.length && !u.collapsed) for (const c of u.kids) add(view.index.get(c));
      };
      add(v);
    }
    const topBand = new Map();
    for (const b of bandAt.values()) for (const n of b.nodes) topBand.set(n.v.id, b);
    for (const i of r.inputs) {
      const p = { x: i.x, y: i.y, w: i.w, h: i.h };
      pos.set(i.id, p);
      const b = bandOfY(i.y);
      b.inputs.push({ ...i.input, ...p, id: i.id });
      b.crossing.push({ from: i.from, to: i.id, edge: i.input.edge });
      grow(b, p.y, p.y + p.h);
    }
    for (const e of r.edges) {
      const b = topBand.get(e.edge.target) || bandOfY(e.pts[0].y);
      b.edges.push({ id: e.edge.id, pts: e.pts, edge: view.edges[e.edge.index] });
      for (const p of e.pts) grow(b, p.y, p.y);
    }
    const bands = [...bandAt.values()].sort((a, b) => a.k - b.k);
    bands.forEach((b, k) => { b.k = k; b.height = b.bottom - b.y; delete b.bottom; });
    return { bands, pos, width: r.width, height: r.height };
  }

  function isBig(view) {
    return !!Layered && view.nodes.length > FAST_NODES;
  }

  // A fast layout as typed arrays for postMessage (transferred, not
  // copied: unpacking 4,000 nodes' objects on the page costs ~50 ms, and
  // the page is what must stay free). Nodes and edges by their index in
  // the view: the page's prepare() of the same model and collapsed set
  // makes the same view.
  function packLayout(r) {
    const buffers = [];
    const typed = (T, a) => { const t = T.from(a); buffers.push(t.buffer); return t; };
    const bands = r.bands.map(b => {
      const box = [], ptOff = [0], pts = [];
      for (const n of b.nodes) box.push(n.x, n.y, n.w, n.h);
      for (const e of b.edges) {
        for (const p of e.pts) pts.push(p.x, p.y);
        ptOff.push(pts.length);
      }
      return {
        k: b.k, y: b.y, width: b.width, height: b.height,
        nodes: typed(Int32Array, b.nodes.map(n => n.v.n)), box: typed(Float64Array, box),
        edges: typed(Int32Array, b.edges.map(e => (e.edge ? e.edge.i : -1))),
        ptOff: typed(Int32Array, ptOff), pts: typed(Float64Array, pts),
        inputs: b.inputs.map(i => ({ ...i, edge: i.edge.i })),
        crossing: b.crossing.map(c => ({ from: c.from, to: c.to, edge: c.edge.i })),
      };
    });
    return { laid: { width: r.width, height: r.height, bands }, buffers };
  }
  function unpackLayout(view, p) {
    return run(unpackSteps(view, p));
  }
  // unpackLayout()'s work, a band at a time.
  function* unpackSteps(view, p) {
    const pos = new Map();
    const bands = [];
    for (const b of p.bands) {
      yield;
      const nodes = [], edges = [];
      for (let j = 0; j < b.nodes.length; j++) {
        const v = view.nodes[b.nodes[j]];
        const box = { x: b.box[4 * j], y: b.box[4 * j + 1], w: b.box[4 * j + 2], h: b.box[4 * j + 3] };
        if (!v) continue;
        pos.set(v.id, box);
        nodes.push({ v, ...box });
      }
      for (let j = 0; j < b.edges.length; j++) {
        const pts = [];
        for (let q = b.ptOff[j]; q < b.ptOff[j + 1]; q += 2) pts.push({ x: b.pts[q], y: b.pts[q + 1] });
        edges.push({ id: 'e' + b.edges[j], pts, edge: view.edges[b.edges[j]] });
      }
      for (const i of b.inputs) {
        i.edge = view.edges[i.edge];
        pos.set(i.id, { x: i.x, y: i.y, w: i.w, h: i.h });
      }
      for (const c of b.crossing) c.edge = view.edges[c.edge];
      bands.push({ k: b.k, y: b.y, width: b.width, height: b.height, nodes, edges, inputs: b.inputs, crossing: b.crossing });
    }
    return { width: p.width, height: p.height, bands, pos };
  }

  // The worker's side (`scope`: its global): {seq, model (or its JSON
  // text), collapsed} in, {seq, laid, ms} or {seq, error} out.
  function serveLayouts(scope) {
    scope.onmessage = e => {
      const { seq, model, collapsed } = e.data || {};
      try {
        const t0 = Date.now();
        const m = decode(typeof model === 'string' ? JSON.parse(model) : model);
        const { laid, buffers } = packLayout(fastLayout(prepare(m, new Set(collapsed || []))));
        scope.postMessage({ seq, laid, ms: Date.now() - t0 }, buffers);
      } catch (err) {
        scope.postMessage({ seq, error: String((err && err.message) || err) });
      }
    };
  }

  // Big layouts off the page's thread: a worker made from the text of
  // layered.js and this file (`sources`; a blob URL, which the webview's
  // CSP allows as `worker-src blob:` and the offline page needs no server
  // for). Null where there are no workers; a worker that fails (a CSP that
  // refuses it) rejects, and the page lays out itself.
  function makeLayoutWorker(sources) {
    if (typeof Worker === 'undefined' || typeof Blob === 'undefined' || typeof URL === 'undefined' ||
        !sources || !sources.length || !sources.every(s => typeof s === 'string' && s))
      return null;
    let worker;
    try {
      const text = sources.map(s => s + '\n;\n').join('') + 'TosaGraph.serveLayouts(self);\n';
      worker = new Worker(URL.createObjectURL(new Blob([text], { type: 'text/javascript' })));
    } catch (e) {
      return null;
    }
    let seq = 0, broken = null;
    const waiting = new Map();
    worker.onmessage = e => {
      const m = timed('message', () => e.data || {}), w = waiting.get(m.seq);
      if (!w) return;
      waiting.delete(m.seq);
      if (m.error) w.reject(new Error(m.error)); else w.resolve(m);
    };
    worker.onerror = e => {
      broken = (e && e.message) || 'the layout worker failed';
      for (const w of waiting.values()) w.reject(new Error(broken));
      waiting.clear();
    };
    const api = {
      // The packed layout of `model` (an object, or its JSON text: a
      // string is copied to the worker, an object cloned node by node).
      request(model, collapsed) {
        if (broken) return Promise.reject(new Error(broken));
        return new Promise((resolve, reject) => {
          const s = ++seq;
          waiting.set(s, { resolve: m => resolve(m.laid), reject });
          worker.postMessage({ seq: s, model, collapsed });
        });
      },
      layout: view => api.request(view.model, view.collapsed).then(laid => unpackLayout(view, laid)),
      terminate() { worker.terminate(); },
    };
    return api;
  }

  // Lays the view out band after band; `onBand(band)` sees each as it is
  // placed (the page draws it at once). `alive()` false stops the work.
  // Big views: layered.js at once (in `worker` when given, else here),
  // then its bands. The result's `where` says which thread laid it out.
  async function layout(view, elk, onBand, alive, worker) {
    if (isBig(view)) {
      const t0 = Date.now();
      let r = null, where = 'page';
      if (worker) {
        try {
          r = await worker.layout(view);
          where = 'worker';
        } catch (e) {
          r = null; // refused or failed: here instead
        }
        if (alive && !alive()) return null;
      }
      if (!r) r = fastLayout(view);
      for (const b of r.bands) {
        b.ms = Date.now() - t0;
        if (onBand) onBand(b, r.pos);
      }
      r.fast = true;
      r.where = where;
      return r;
    }
    const all = bands(view);
    const bandOf = new Map();
    all.forEach((b, k) => b.forEach(v => bandOf.set(v.id, k)));
    const pos = new Map();
    const placed = [];
    let y = 0, width = 0;
    for (let k = 0; k < all.length; k++) {
      const { graph, inputs, crossing } = elkBand(view, all[k], k, bandOf);
      const t0 = Date.now();
      const r = await elk.layout(graph);
      if (alive && !alive()) return null;
      const band = { k, y, width: r.width, height: r.height, nodes: [], edges: [], inputs: [], crossing, ms: Date.now() - t0 };
      const walk = (list) => {
        for (const c of list || []) {
          const p = { x: c.x, y: c.y + y, w: c.width, h: c.height };
          pos.set(c.id, p);
          if (inputs.has(c.id)) band.inputs.push({ ...inputs.get(c.id), ...p });
          else band.nodes.push({ v: view.index.get(c.id), ...p });
          walk(c.children);
        }
      };
      walk(r.children);
      const collect = (node) => {
        for (const e of node.edges || []) {
          const pts = [];
          for (const s of e.sections || []) {
            pts.push(s.startPoint, ...(s.bendPoints || []), s.endPoint);
          }
          band.edges.push({ id: e.id, pts: pts.map(p => ({ x: p.x, y: p.y + y })) });
        }
        for (const c of node.children || []) collect(c);
      };
      collect(r);
      const byElkId = new Map(graph.edges.map(e => [e.id, e.index]));
      for (const e of band.edges) e.edge = view.edges[byElkId.get(e.id)];
      width = Math.max(width, r.width);
      placed.push(band);
      if (onBand) onBand(band, pos);
      y += r.height + BAND_GAP;
    }
    const where = elk && elk.where ? elk.where() : 'page';
    return { bands: placed, pos, width, height: Math.max(0, y - BAND_GAP), where };
  }

  function path(pts) {
    if (!pts.length) return '';
    return 'M' + pts.map(p => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('L');
  }

  function edgeSVG(e, pts, extra) {
    const cls = ['edge'];
    if (e.dynamic) cls.push('dynamic');
    if (e.refinable) cls.push('refinable');
    if (extra) cls.push(extra);
    let s = `<path class="${cls.join(' ')}" d="${path(pts)}" data-from="${esc(e.from)}" data-to="${esc(e.to)}"/>`;
    if (pts.length >= 2 && extra !== 'far') {
      // The label just below the producer: one place per value and edge.
      const a = pts[0], b = pts[1];
      const t = Math.min(1, 16 / Math.max(1, Math.hypot(b.x - a.x, b.y - a.y)));
      const x = a.x + (b.x - a.x) * t + 4, y = a.y + (b.y - a.y) * t + 4;
      s += `<text class="elabel" x="${x.toFixed(1)}" y="${y.toFixed(1)}">${dimSpans(clip(shapeOf(e.type)))}</text>`;
    }
    return s;
  }

  function nodeSVG(v, p) {
    const cls = v.cls.slice();
    const region = v.kids && v.kids.length && !v.collapsed;
    let s = '';
    if (region) {
      cls[0] = 'region';
      s += `<g class="${cls.join(' ')}" data-id="${esc(v.id)}"><rect x="${p.x}" y="${p.y}" width="${p.w}" height="${p.h}"/>`;
      s += `<g class="head" data-id="${esc(v.id)}" data-region="1">`;
    } else {
      if (v.collapsed) cls.push('collapsed');
      s += `<g class="${cls.join(' ')}" data-id="${esc(v.id)}"><rect x="${p.x}" y="${p.y}" width="${p.w}" height="${region ? v.height : p.h}"/>`;
    }
    v.lines.forEach((l, i) => {
      const text = l.cls === 'title' && region ? '\u25be ' + l.text : l.text;
      s += `<text class="${l.cls}" x="${(p.x + PAD_X).toFixed(1)}" y="${(p.y + PAD_Y + LINE_H * (i + 1) - 3).toFixed(1)}">${l.dims ? dimSpans(text) : esc(text)}</text>`;
    });
    if (v.badge) {
      const w = v.badge.length * 6.2 + 10;
      s += `<g class="badge"><rect x="${(p.x + p.w - w - 4).toFixed(1)}" y="${p.y + 4}" width="${w.toFixed(1)}" height="14"/><text x="${(p.x + p.w - w + 1).toFixed(1)}" y="${p.y + 15}">${esc(v.badge)}</text></g>`;
    }
    if (region) s += '</g>';
    return s + '</g>';
  }

  function inputSVG(input) {
    return `<g class="node input" data-id="${esc(input.edge.from)}"><rect x="${input.x}" y="${input.y}" width="${input.w}" height="${input.h}"/>` +
      `<text x="${(input.x + PAD_X).toFixed(1)}" y="${(input.y + PAD_Y + LINE_H - 3).toFixed(1)}">${dimSpans(input.label)}</text></g>`;
  }

  // One band's picture: regions under their contents, edges under nodes.
  function bandSVG(band, pos) {
    let regions = '', nodes = '', edges = '', cross = '';
    for (const n of band.nodes) {
      const s = nodeSVG(n.v, n);
      if (n.v.kids && n.v.kids.length && !n.v.collapsed) regions += s; else nodes += s;
    }
    for (const i of band.inputs) nodes += inputSVG(i);
    for (const e of band.edges) if (e.edge) edges += edgeSVG(e.edge, e.pts);
    // Values from earlier bands: from their producer to the input node.
    for (const c of band.crossing) {
      const a = pos.get(c.from), b = pos.get(c.to);
      if (!a || !b) continue;
      const x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y;
      const far = y2 - y1 > 600;
      cross += `<path class="edge${c.edge.dynamic ? ' dynamic' : ''}${far ? ' far' : ''}" d="M${x1.toFixed(1)},${y1.toFixed(1)}C${x1.toFixed(1)},${(y1 + 40).toFixed(1)} ${x2.toFixed(1)},${(y2 - 40).toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}" data-from="${esc(c.from)}" data-to="${esc(c.to)}"/>`;
    }
    return `<g class="band" data-band="${band.k}">${regions}${edges}${cross}${nodes}</g>`;
  }

  const DEFS = '<defs><marker id="tg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z"/></marker></defs>';

  // The whole picture as one SVG document (render.js; tests).
  async function renderSVG(model, elk) {
    model = decode(model);
    const view = prepare(model, new Set());
    const laid = await layout(view, elk);
    const w = Math.ceil(laid.width + 20), h = Math.ceil(laid.height + 50);
    let body = '';
    for (const b of laid.bands) body += bandSVG(b, laid.pos);
    const title = `@${model.function}` + (model.truncated ? ' (truncated: regions collapsed, too many nodes)' : '');
    return `<svg xmlns="http://www.w3.org/2000/svg" class="tosa-graph" width="${w}" height="${h}" viewBox="-10 -30 ${w} ${h}">` +
      `<style>${svgCSS()}</style>${DEFS}<text x="0" y="-12" class="title" style="font-weight:bold">${esc(title)}</text>${body}</svg>\n`;
  }

  // An ELK running in a worker made from its own source (`source`, the text
  // of elk.bundled.js): the page stays responsive while a graph is laid
  // out. Until the worker has compiled ELK (seconds on a loaded machine)
  // and where workers are refused (a CSP, some file:// pages), ELK runs in
  // the page's thread: the first picture does not wait for the worker.
  async function makeElk(ELK, source) {
    let local = null;
    const inPage = () => local || (local = new ELK());
    if (!source || typeof Worker === 'undefined' || typeof Blob === 'undefined' || typeof URL === 'undefined')
      return inPage();
    let ready = null;
    try {
      const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
      const worker = new Worker(url);
      const elk = new ELK({ workerFactory: () => worker });
      const probe = elk.layout({ id: 'probe', children: [{ id: 'a', width: 1, height: 1 }], edges: [] });
      Promise.race([probe.then(() => true, () => false),
        new Promise(r => { worker.addEventListener('error', () => r(false)); setTimeout(() => r(false), 60000); })])
        .then(ok => { if (ok) ready = elk; else worker.terminate(); });
    } catch (e) {
      return inPage();
    }
    return { layout: graph => (ready || inPage()).layout(graph), where: () => (ready ? 'worker' : 'page') };
  }

  // After the tasks queued now (a message, not a timer: timers of hidden
  // pages are throttled).
  function nextTask() {
    return new Promise(resolve => {
      if (typeof MessageChannel === 'undefined') return setTimeout(resolve, 0);
      const c = new MessageChannel();
      c.port1.onmessage = () => { c.port1.close(); resolve(); };
      c.port2.postMessage(0);
    });
  }

  function summary(model) {
    const ops = (model.nodes || []).filter(n => (n.kind || 'op') === 'op').length;
    const errors = (model.nodes || []).filter(n => (n.errors || []).length).length;
    return `@${model.function}${model.stage ? ` after ${model.stage} lowering` : ''}: ${ops} ops` + (errors ? `, ${errors} with errors` : '');
  }

  // The interactive view in `container`. options: {elk, layoutWorker (a
  // makeLayoutWorker() or a promise of one), onSelect(node), onState(state),
  // state, onStage(stage)}: with onStage, a toggle asks the
  // host for the function after linalg lowering (stage "linalg") or as
  // written (null); the host answers with update(model of that stage).
  // Returns {update(model), showError(msg),
  // highlight(id, center), highlightAt(position), fit()}.
  function mount(container, model, options) {
    const doc = container.ownerDocument;
    if (!doc.getElementById('tosa-graph-style')) {
      const st = doc.createElement('style');
      st.id = 'tosa-graph-style';
      st.textContent = CSS;
      doc.head.appendChild(st);
    }
    container.classList.add('tosa-graph-root');
    container.innerHTML = `<div class="tg-bar"><input class="tg-search" type="search" placeholder="Search op or %value" aria-label="Search op or SSA name">` +
      `<button data-act="prev" title="Previous match">\u2191</button><button data-act="next" title="Next match (Enter)">\u2193</button>` +
      `<button data-act="fit" title="Fit the graph">Fit</button><button data-act="in" title="Zoom in">+</button><button data-act="out" title="Zoom out">\u2212</button>` +
      `<button data-act="expand" title="Expand all regions">Expand all</button><button data-act="collapse" title="Collapse all regions">Collapse all</button>` +
      `<button data-act="stage" class="tg-stage" title="The function after the lowering preview's linalg stage" aria-pressed="false" hidden>After lowering</button>` +
      `<span class="tg-status"></span></div><div class="tg-note" hidden></div><div class="tg-error" hidden></div><div class="tg-canvas"></div>`;
    const $ = s => container.querySelector(s);
    const canvas = $('.tg-canvas'), status = $('.tg-status'), note = $('.tg-note'), errorBox = $('.tg-error');
    const state = Object.assign({ tx: 20, ty: 20, k: 1, collapsed: [], placed: false, stage: null }, options.state || {});
    const stageButton = $('.tg-stage');
    stageButton.hidden = !options.onStage;
    const showStage = () => {
      stageButton.setAttribute('aria-pressed', String(!!state.stage));
      stageButton.textContent = state.stage ? 'As written' : 'After lowering';
      stageButton.title = state.stage ? 'The function as written (TOSA)' : "The function after the lowering preview's linalg stage";
    };
    showStage();
    let collapsed = new Set(state.collapsed);
    let current = null, svg = null, viewport = null, view = null, laid = null, generation = 0;
    let matches = [], matchAt = -1, lastModel = null, lastText = null, lastPos = new Map();
    const saveState = () => options.onState && options.onState({ tx: state.tx, ty: state.ty, k: state.k, collapsed: [...collapsed], placed: state.placed, stage: state.stage });

    // Zoomed out this far, a big graph is drawn on a canvas (boxes and
    // lines, no text): thousands of SVG nodes repaint too slowly in
    // software rendering for a pan to keep up.
    const sketchy = () => laid && laid.fast && state.k < FAR_K;
    function applyTransform() {
      if (!viewport) return;
      // A CSS transform of the <svg> (not a transform attribute of its
      // group): the SVG's style and layout are not redone and its painted
      // items are kept, so a pan frame does a third less work on the page's
      // thread. No will-change: a composited layer of the whole picture
      // rasterised worse in software.
      svg.style.transform = `translate(${state.tx.toFixed(1)}px,${state.ty.toFixed(1)}px) scale(${state.k.toFixed(4)})`;
      svg.classList.toggle('far', state.k < FAR_K);
      cull();
    }
    // Only the bands on screen are in the document (added the first time
    // they show, taken out when they leave): panning a 4,000-op graph
    // repaints a screenful, and its document stays small.
    let bandEls = new Map(), matchSet = new Set();
    function cull() {
      timed('cull', cullNow);
    }
    function cullNow() {
      if (!laid || !svg) return;
      const h = canvas.clientHeight || 800;
      const top = -state.ty / state.k - 200, bottom = (h - state.ty) / state.k + 200;
      const far = sketchy();
      viewport.style.display = far ? 'none' : '';
      // One band built per frame, those on screen first: a band is
      // hundreds of elements to parse and style (tens of ms on a loaded
      // machine); the next frame builds the next.
      const onScreen = b => b.y + b.height >= top + 200 && b.y <= bottom - 200;
      const order = laid.bands.filter(Boolean).sort((a, b) => onScreen(b) - onScreen(a));
      let built = 0, more = false;
      for (const b of order) {
        const visible = !far && b.y + b.height >= top && b.y <= bottom;
        let g = bandEls.get(b.k);
        if (visible && !g && built) {
          more = true;
        } else if (visible && !g) {
          viewport.insertAdjacentHTML('beforeend', bandSVG(b, laid.pos));
          g = viewport.lastElementChild;
          bandEls.set(b.k, g);
          restyle(g);
          built++;
        } else if (visible && !g.isConnected) {
          viewport.appendChild(g);
        } else if (!visible && g && g.isConnected) {
          g.remove();
        }
      }
      if (more) schedule();
      drawSketch(far, top, bottom);
    }
    // The classes of a band's nodes that depend on the view's state.
    function restyle(g) {
      for (const el of g.querySelectorAll('[data-id]')) {
        const id = el.getAttribute('data-id');
        if (id === current && !el.classList.contains('head') && !el.classList.contains('input')) el.classList.add('current');
        if (matchSet.has(id) && el.matches('g.node')) el.classList.add('match');
      }
    }
    let sketch = null;
    function drawSketch(far, top, bottom) {
      if (!far) { if (sketch) sketch.hidden = true; return; }
      if (!sketch) {
        sketch = doc.createElement('canvas');
        sketch.className = 'tg-sketch';
      }
      if (sketch.parentNode !== canvas) canvas.appendChild(sketch);
      sketch.hidden = false;
      const dpr = (doc.defaultView && doc.defaultView.devicePixelRatio) || 1;
      const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
      if (sketch.width !== Math.round(w * dpr) || sketch.height !== Math.round(h * dpr)) {
        sketch.width = Math.round(w * dpr);
        sketch.height = Math.round(h * dpr);
        sketch.style.width = w + 'px';
        sketch.style.height = h + 'px';
      }
      const ctx = sketch.getContext('2d');
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, sketch.width, sketch.height);
      ctx.setTransform(dpr * state.k, 0, 0, dpr * state.k, dpr * state.tx, dpr * state.ty);
      // The theme's border colour, read once (a computed style per frame
      // would recalculate styles each frame).
      if (!sketch.border)
        sketch.border = (doc.defaultView.getComputedStyle(container).getPropertyValue('--vscode-editorWidget-border') || '').trim() || '#8a8f98';
      // One path per style: a few calls to the rasteriser per frame.
      const boxes = new Path2D(), errors = new Path2D(), regions = new Path2D(), lines = new Path2D(), dyn = new Path2D();
      for (const b of laid.bands) {
        if (!b || b.y + b.height < top || b.y > bottom) continue;
        for (const n of b.nodes) {
          const region = n.v.kids && n.v.kids.length && !n.v.collapsed;
          (region ? regions : n.v.cls.includes('error') ? errors : boxes).rect(n.x, n.y, n.w, n.h);
        }
        for (const i of b.inputs) boxes.rect(i.x, i.y, i.w, i.h);
        for (const e of b.edges) {
          if (!e.edge || e.pts.length < 2) continue;
          const p = e.edge.dynamic ? dyn : lines;
          p.moveTo(e.pts[0].x, e.pts[0].y);
          for (let i = 1; i < e.pts.length; i++) p.lineTo(e.pts[i].x, e.pts[i].y);
        }
      }
      ctx.lineWidth = 1 / state.k;
      ctx.strokeStyle = sketch.border;
      ctx.stroke(regions);
      ctx.fillStyle = '#9aa4b1';
      ctx.fill(boxes);
      ctx.stroke(lines);
      ctx.strokeStyle = '#c25e00';
      ctx.stroke(dyn);
      ctx.fillStyle = '#e5534b';
      ctx.fill(errors);
    }
    let pending = 0;
    function schedule() {
      if (pending) return;
      pending = requestAnimationFrame(() => { pending = 0; applyTransform(); });
    }
    function zoomAt(factor, cx, cy) {
      const k = Math.min(4, Math.max(0.02, state.k * factor));
      state.tx = cx - (cx - state.tx) * (k / state.k);
      state.ty = cy - (cy - state.ty) * (k / state.k);
      state.k = k;
      schedule();
      saveState();
    }
    function fit() {
      if (!laid) return;
      const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
      const k = Math.min(2, Math.max(0.02, Math.min((w - 40) / Math.max(1, laid.width), (h - 40) / Math.max(1, laid.height))));
      state.k = k;
      state.tx = (w - laid.width * k) / 2;
      state.ty = 20;
      applyTransform();
      saveState();
    }
    // A start that shows something readable: the whole graph when it fits
    // at a useful scale, else the top of it at its full width.
    function initialView() {
      const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
      const k = Math.min(1, (w - 40) / Math.max(1, laid.width), (h - 40) / Math.max(1, laid.height));
      if (k >= 0.5) return fit();
      state.k = Math.max(0.5, Math.min(1, (w - 40) / Math.max(1, laid.width)));
      state.tx = 20;
      state.ty = 20;
      applyTransform();
    }
    function centerOn(id) {
      const p = laid && laid.pos.get(id);
      if (!p) return;
      const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
      if (state.k < 0.6) state.k = 0.9;
      state.tx = w / 2 - (p.x + p.w / 2) * state.k;
      state.ty = h / 2 - (p.y + p.h / 2) * state.k;
      applyTransform();
      saveState();
    }
    function markCurrent(id) {
      for (const el of svg ? svg.querySelectorAll('.current') : []) el.classList.remove('current');
      current = id;
      if (!svg || id == null) return;
      for (const el of svg.querySelectorAll(`[data-id="${cssEscape(id)}"]:not(.input)`)) {
        if (el.classList.contains('head')) continue;
        el.classList.add('current');
      }
    }
    function cssEscape(s) {
      return String(s).replace(/["\\]/g, '\\$&');
    }
    function search(q) {
      for (const el of svg ? svg.querySelectorAll('.match') : []) el.classList.remove('match');
      matches = [];
      matchSet = new Set();
      matchAt = -1;
      q = q.trim().toLowerCase();
      if (!q || !view) { showStatus(); return; }
      for (const v of view.nodes) {
        const n = v.src;
        const names = [n.label, n.id, ...(n.results || []), ...v.consts.map(c => c.id)];
        if (names.some(s => String(s).toLowerCase().includes(q))) matches.push(v.id);
      }
      matchSet = new Set(matches);
      for (const id of matches)
        for (const el of svg.querySelectorAll(`g.node[data-id="${cssEscape(id)}"]`)) el.classList.add('match');
      status.textContent = `${matches.length} match${matches.length === 1 ? '' : 'es'}`;
    }
    function step(d) {
      if (!matches.length) return;
      matchAt = (matchAt + d + matches.length) % matches.length;
      centerOn(matches[matchAt]);
      markCurrent(matches[matchAt]);
      status.textContent = `match ${matchAt + 1} of ${matches.length}`;
    }
    function showStatus(extra) {
      if (!lastModel) return;
      status.textContent = summary(lastModel) + (extra ? ' \u2014 ' + extra : '');
    }

    // `text`: the model's JSON text when the host has it (the offline page,
    // the webview), sent to the layout worker as it is.
    async function render(wire, text) {
      const gen = ++generation;
      const alive = () => gen === generation;
      // Kept as it came (decoded below): a redraw asked for meanwhile
      // (a region toggled) draws this model, not the one before.
      lastModel = wire;
      lastText = text;
      errorBox.hidden = true;
      // A big function's layout starts in the worker at once; the page
      // decodes and prepares its own view of it meanwhile, in slices of a
      // few ms (tasks of tens of ms would make frames late).
      let job = null;
      if (Layered && options.layoutWorker && (wire.nodes || []).length > FAST_NODES) {
        const w = await options.layoutWorker;
        if (!alive()) return;
        if (w) {
          job = w.request(text || wire, [...collapsed]);
          job.catch(() => {}); // awaited below, or dropped with a small view
          await nextTask();
          if (!alive()) return;
        }
      }
      const model = job ? await sliced('decode', decodeSteps(wire), alive) : timed('decode', () => decode(wire));
      if (!model) return;
      lastModel = model;
      if (job) {
        const v = await sliced('prepare', prepareSteps(model, collapsed), alive);
        if (!v) return;
        view = v;
      } else {
        view = prepare(model, collapsed);
      }
      const notes = [];
      if (model.truncated)
        notes.push(`This function is too big to draw whole: only its top-level ops are shown, regions collapsed` +
          (model.omitted ? `, and ${model.omitted} ops past the first ${model.nodes.length} are left out.` : '.'));
      note.hidden = !notes.length;
      note.textContent = notes.join(' ');
      if (!model.nodes || !model.nodes.length) {
        canvas.innerHTML = '';
        svg = null;
        laid = null;
        note.hidden = false;
        note.textContent = `@${model.function} has no ops to draw.`;
        showStatus();
        return;
      }
      const t0 = Date.now();
      const fresh = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
      fresh.setAttribute('class', 'tosa-graph');
      fresh.innerHTML = DEFS + '<g class="viewport"></g>';
      const vp = fresh.querySelector('.viewport');
      let first = true, bandsDone = 0;
      const nBands = Math.ceil(view.top.length / BAND);
      // A big view does not wait for ELK (a worker compiling 1.6 MB).
      const elk = isBig(view) ? null : await options.elk;
      // A big view: layered.js in the worker (the page pans meanwhile).
      const worker = job && isBig(view) ? { layout: v => job.then(laid => sliced('unpack', unpackSteps(v, laid), alive)) } : null;
      const result = await layout(view, elk, (band, pos) => timed('band', () => {
        if (gen !== generation) return;
        bandsDone++;
        if (first) {
          // The first band replaces the old picture: no blank moment.
          first = false;
          canvas.innerHTML = '';
          canvas.appendChild(fresh);
          svg = fresh;
          viewport = vp;
          bandEls = new Map();
          laid = { bands: [], pos, width: band.width, height: band.height, fast: isBig(view) };
          // For bench/graph_render.js: ms since the page started.
          if (typeof performance !== 'undefined') container.dataset.firstBandAt = performance.now().toFixed(0);
        }
        laid.bands[band.k] = band;
        laid.width = Math.max(laid.width, band.width);
        laid.height = band.y + band.height;
        if (bandsDone === 1) {
          if (!state.placed) { initialView(); state.placed = true; saveState(); } else applyTransform();
        } else if (!laid.fast) cull(); // a fast layout's bands come at once: one cull after them
        if (nBands > 1 && !laid.fast) showStatus(`laying out ${bandsDone}/${nBands}`);
      }), alive, worker);
      if (!result || gen !== generation) return;
      timed('finish', () => finish(result, t0, gen));
    }
    function finish(result, t0, gen) {
      laid = result;
      laid.fast = isBig(view);
      lastPos = result.pos;
      markCurrent(current);
      const q = $('.tg-search').value;
      if (q) search(q); else showStatus();
      applyTransform();
      container.dataset.layoutMs = String(Date.now() - t0);
      // Which thread laid it out (tests: a big graph must not be the page's).
      container.dataset.layoutIn = result.where || 'page';
      container.dataset.rendered = String(gen);
      container.dataset.nodes = String(view.nodes.length);
      if (typeof performance !== 'undefined') container.dataset.renderedAt = performance.now().toFixed(0);
      if (options.onRendered) options.onRendered({ ms: Date.now() - t0, nodes: view.nodes.length });
    }

    // Interaction.
    let drag = null;
    canvas.addEventListener('pointerdown', e => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, tx: state.tx, ty: state.ty, moved: false };
      canvas.setPointerCapture && canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointermove', e => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      drag.moved = true;
      canvas.classList.add('panning');
      state.tx = drag.tx + dx;
      state.ty = drag.ty + dy;
      schedule();
    });
    canvas.addEventListener('pointerup', e => {
      const d = drag;
      drag = null;
      canvas.classList.remove('panning');
      if (d && d.moved) { saveState(); return; }
      const target = doc.elementFromPoint ? doc.elementFromPoint(e.clientX, e.clientY) : e.target;
      click(target);
    });
    canvas.addEventListener('wheel', e => {
      e.preventDefault();
      const r = canvas.getBoundingClientRect();
      if (e.ctrlKey || !e.shiftKey) zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
      else { state.tx -= e.deltaX || e.deltaY; schedule(); }
    }, { passive: false });
    function click(target) {
      const el = target && target.closest ? target.closest('[data-id]') : null;
      if (!el || !view) return;
      const id = el.getAttribute('data-id');
      const v = view.index.get(id);
      const n = v ? v.src : view.byId.get(id);
      if (!n) return;
      markCurrent(id);
      if (options.onSelect) options.onSelect(n);
    }
    // Double-click on a region (or a collapsed one) folds or unfolds it.
    canvas.addEventListener('dblclick', e => {
      const el = e.target.closest && e.target.closest('[data-id]');
      const id = el && el.getAttribute('data-id');
      if (id && view && ((view.index.get(id) || {}).kids || []).length + (collapsed.has(id) ? 1 : 0)) toggle(id);
    });
    function toggle(id) {
      if (collapsed.has(id)) collapsed.delete(id); else collapsed.add(id);
      saveState();
      if (lastModel) render(lastModel, lastText);
    }
    container.querySelector('.tg-bar').addEventListener('click', e => {
      const act = e.target.closest && e.target.closest('button') && e.target.closest('button').dataset.act;
      const w = canvas.clientWidth / 2, h = canvas.clientHeight / 2;
      if (act === 'fit') fit();
      else if (act === 'in') zoomAt(1.25, w, h);
      else if (act === 'out') zoomAt(0.8, w, h);
      else if (act === 'next') step(1);
      else if (act === 'prev') step(-1);
      else if (act === 'stage') {
        // Another function's picture: placed afresh when it comes.
        state.stage = state.stage ? null : 'linalg';
        state.placed = false;
        collapsed = new Set();
        showStage();
        saveState();
        status.textContent = state.stage ? 'lowering\u2026' : '';
        options.onStage(state.stage);
      } else if (act === 'expand' || act === 'collapse') {
        collapsed = new Set();
        if (act === 'collapse' && lastModel)
          for (const n of decode(lastModel).nodes) if (n.parent != null) collapsed.add(n.parent);
        saveState();
        if (lastModel) render(lastModel, lastText);
      }
    });
    const input = $('.tg-search');
    input.addEventListener('input', () => search(input.value));
    input.addEventListener('keydown', e => { if (e.key === 'Enter') step(e.shiftKey ? -1 : 1); });
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => cull()).observe(canvas);

    const api = {
      // `m`: the model, or its JSON text.
      update(m) { return typeof m === 'string' ? render(timed('parse', () => JSON.parse(m)), m) : render(m); },
      showError(message) {
        errorBox.hidden = false;
        errorBox.textContent = message;
        status.textContent = '';
      },
      highlight(id, center) {
        markCurrent(id);
        if (center) centerOn(id);
      },
      // The node of the op at an editor position: the first named on its
      // line, else the last whose name starts before it (ranges are op
      // names; ops nest in text order).
      nodeAt(position) {
        if (!view) return null;
        let best = null;
        // The first node named on the cursor's line: a cursor on an op's
        // result (`%sum = tosa.add`) is before the op name, which the
        // node's range covers.
        let onLine = null;
        for (const v of view.nodes) {
          const s = v.src.range && v.src.range.start;
          if (!s) continue;
          if (s.line === position.line && (!onLine || s.character < onLine.src.range.start.character)) onLine = v;
          if (s.line < position.line || (s.line === position.line && s.character <= position.character)) {
            if (!best || s.line > best.src.range.start.line || (s.line === best.src.range.start.line && s.character >= best.src.range.start.character)) best = v;
          }
        }
        if (onLine && (!best || best.src.range.start.line !== position.line)) best = onLine;
        return best ? best.id : null;
      },
      fit,
      state: () => ({ ...state, collapsed: [...collapsed] }),
      rendered: () => !!laid,
    };
    if (model) api.update(model);
    return api;
  }

  return {
    decode, prepare, layout, fastLayout, packLayout, unpackLayout, serveLayouts, makeLayoutWorker,
    renderSVG, bandSVG, mount, makeElk, summary, CSS, ELK_OPTIONS, ELK_BIG, BAND, FAST_NODES,
  };
});
