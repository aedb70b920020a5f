// The graph view's pure parts (no `vscode`): the `tosa/graph` request's
// parameters and result, the functions a code lens offers, the webview's
// page. Wired to VS Code in graphPanel.ts; tested in test/graph.test.ts.

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

/** A node as `tosa/graph` sends it (server/GraphJSON.h): fields at their
 * default left out, types by their index in `GraphResult.types`. The page
 * (editors/graph/graph-view.js, `decode`) fills them back in. */
export interface GraphNode {
  /** Absent: the first result's name, else the label (an argument). */
  id?: string;
  /** Absent: 'op'. */
  kind?: 'argument' | 'op' | 'return';
  label: string;
  results?: string[];
  /** [line, character, endLine, endCharacter]. */
  range: [number, number, number, number];
  /** Declared result types (indices in `types`; 0: none). */
  types?: number[];
  /** Inferred types where they differ (0 where not); absent: none do. */
  inferred?: number[];
  errors?: string[];
  broadcast?: 'refinable' | 'runtime-check' | 'incompatible';
  constant?: boolean;
  constantBytes?: number;
  /** The index in `nodes` of the region op holding it. */
  parent?: number;
  collapsed?: boolean;
}
/** [from, to, value, type, flags]: node indices, the value's name, its
 * type's index, 1 (a `?` size) | 2 (refinable). */
export type GraphEdge = [number, number, string, number, number];
export interface GraphResult {
  uri?: string;
  version?: number;
  function: string;
  range: [number, number, number, number];
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Type strings, named by index; types[0] is ''. */
  types: string[];
  truncated: boolean;
  omitted?: number;
  /** The lowering stage the graph is after ("linalg"); absent: as written. */
  stage?: string;
  /** The lowering mode with a stage ("fast"). */
  mode?: string;
}

/** `tosa/graph`'s parameters: the function by name once known (a cursor
 * elsewhere does not switch the view), else the one at `position`. */
export function graphParams(uri: string, target: { function?: string; position?: LspPosition; stage?: string; mode?: string }):
  { textDocument: { uri: string }; function?: string; position?: LspPosition; stage?: string; mode?: string } {
  const stage = target.stage ? { stage: target.stage, ...(target.mode ? { mode: target.mode } : {}) } : {};
  if (target.function)
    return { textDocument: { uri }, function: target.function, ...stage };
  return { textDocument: { uri }, position: target.position ?? { line: 0, character: 0 }, ...stage };
}

/** Whether `r` looks like a graph (a server of another version may answer
 * something else). */
export function isGraphResult(r: unknown): r is GraphResult {
  const g = r as GraphResult;
  return !!g && typeof g === 'object' && typeof g.function === 'string' && Array.isArray(g.nodes) && Array.isArray(g.edges);
}

/** The graph text last posted to a webview: a publish that brings the
 * same graph again (a second publish of a version: the server publishes
 * more than once per edit) is not drawn again, which would lay out and
 * redraw thousands of nodes for nothing. */
export class PostedGraph {
  private last: string | undefined;
  /** Whether `text` differs from what the view shows (and remember it). */
  changed(text: string): boolean {
    if (text === this.last)
      return false;
    this.last = text;
    return true;
  }
  /** The view shows something else now (an error, a reload). */
  forget(): void {
    this.last = undefined;
  }
}

/** What the panel says for a failed request. */
export function graphErrorMessage(e: unknown): string {
  const raw = e instanceof Error ? e.message : typeof e === 'object' && e && 'message' in e ? String((e as { message: unknown }).message) : String(e);
  if (/Unhandled method|method not found/i.test(raw))
    return 'This tosa-lsp does not answer tosa/graph: update the server (tosaLsp.serverPath).';
  return raw || 'The graph request failed.';
}

/** The `func.func` lines of `text` (0-based) with their names: where the
 * code lenses go. A scan of the text, so lenses show before the server
 * has answered anything. */
export function functionLines(text: string): { line: number; name: string; character: number }[] {
  const out: { line: number; name: string; character: number }[] = [];
  const re = /^([ \t]*)func\.func\b[^@\n]*@("([^"]*)"|[A-Za-z0-9_$.-]+)/gm;
  let m: RegExpExecArray | null;
  let line = 0, last = 0;
  while ((m = re.exec(text))) {
    for (let i = last; i < m.index; i++)
      if (text.charCodeAt(i) === 10)
        line++;
    last = m.index;
    out.push({ line, name: m[3] !== undefined ? m[3] : m[2], character: m[1].length });
  }
  return out;
}

/** The webview's page: the renderer and ELK from the extension (no
 * network), a nonce'd bootstrap, a CSP that allows only those (and blob:
 * workers made from ELK's and the renderer's own text, for layout off the
 * page's thread). */
export function webviewHtml(o: { cspSource: string; nonce: string; elkUri: string; layeredUri: string; viewUri: string; title: string }): string {
  const csp = [
    `default-src 'none'`,
    `script-src ${o.cspSource} 'nonce-${o.nonce}'`,
    `style-src ${o.cspSource} 'unsafe-inline'`,
    `worker-src blob:`,
    `connect-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
  ].join('; ');
  const esc = (s: string) => s.replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width">
<title>${esc(o.title)}</title>
<style nonce="${o.nonce}">html,body{margin:0;padding:0;height:100%;overflow:hidden}#tosa-graph{height:100vh}</style>
</head>
<body>
<div id="tosa-graph"></div>
<script nonce="${o.nonce}" src="${o.elkUri}"></script>
<script nonce="${o.nonce}" src="${o.layeredUri}"></script>
<script nonce="${o.nonce}" src="${o.viewUri}"></script>
<script nonce="${o.nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  // ELK in a worker made from its own text when the page allows one.
  const text = u => fetch(u).then(r => r.text());
  const elk = text(${JSON.stringify(o.elkUri)}).then(src => TosaGraph.makeElk(ELK, src), () => new ELK());
  // Big functions laid out in a worker made from the renderer's own text.
  const layoutWorker = Promise.all([text(${JSON.stringify(o.layeredUri)}), text(${JSON.stringify(o.viewUri)})])
    .then(s => TosaGraph.makeLayoutWorker(s), () => null);
  const view = TosaGraph.mount(document.getElementById('tosa-graph'), null, {
    elk,
    layoutWorker,
    state: vscode.getState() || undefined,
    onState: s => vscode.setState(s),
    onSelect: n => vscode.postMessage({ type: 'select', id: n.id, range: n.range }),
    onRendered: r => vscode.postMessage({ type: 'rendered', ms: r.ms, nodes: r.nodes }),
    onStage: s => vscode.postMessage({ type: 'stage', stage: s }),
  });
  let pendingCursor = null;
  window.addEventListener('message', e => {
    const m = e.data || {};
    if (m.type === 'graph') {
      view.update(m.text || m.graph).then(() => { if (pendingCursor) view.highlight(view.nodeAt(pendingCursor), false); });
    } else if (m.type === 'error') {
      view.showError(m.message);
    } else if (m.type === 'cursor') {
      pendingCursor = m.position;
      view.highlight(view.nodeAt(m.position), !!m.center);
    }
  });
  vscode.postMessage({ type: 'ready', stage: (vscode.getState() || {}).stage || null });
})();
</script>
</body>
</html>
`;
}
