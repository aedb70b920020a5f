// TOSA: Show Graph — a webview beside the editor drawing one function
// (editors/graph/graph-view.js) from the server's `tosa/graph`: a click on
// a node selects its op in the editor, the cursor highlights its node, and
// every publishDiagnostics of the document redraws it where the view is.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient, ProtocolRequestType, State } from 'vscode-languageclient/node';
import { functionLines, GraphResult, graphErrorMessage, graphParams, isGraphResult, LspPosition, LspRange, PostedGraph, webviewHtml } from './graph';

type GraphParams = ReturnType<typeof graphParams>;
const graphRequest = new ProtocolRequestType<GraphParams, GraphResult, never, void, void>('tosa/graph');

/** One panel per source document; it follows one function. */
class GraphPanel {
  readonly panel: vscode.WebviewPanel;
  private fn: string | undefined;
  /** The webview's toggle: the function after this lowering stage. */
  private stage: string | undefined;
  private position: LspPosition;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private ready = false;
  private queued: unknown[] = [];
  private readonly posted = new PostedGraph();

  constructor(private readonly owner: GraphPanels, readonly uri: string, position: LspPosition, private column: vscode.ViewColumn) {
    this.position = position;
    const root = vscode.Uri.joinPath(owner.ctx.extensionUri, 'dist', 'graph');
    this.panel = vscode.window.createWebviewPanel('tosaLsp.graph', 'TOSA Graph', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [root] });
    const w = this.panel.webview;
    w.html = webviewHtml({
      cspSource: w.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      elkUri: w.asWebviewUri(vscode.Uri.joinPath(root, 'elk.bundled.js')).toString(),
      layeredUri: w.asWebviewUri(vscode.Uri.joinPath(root, 'layered.js')).toString(),
      viewUri: w.asWebviewUri(vscode.Uri.joinPath(root, 'graph-view.js')).toString(),
      title: 'TOSA Graph',
    });
    w.onDidReceiveMessage(m => this.onMessage(m));
    this.panel.onDidDispose(() => owner.disposed(this));
  }

  /** Shows the function at `position` (another one than before: it follows). */
  retarget(position: LspPosition, column: vscode.ViewColumn): void {
    this.fn = undefined;
    this.position = position;
    this.column = column;
    this.panel.reveal(undefined, true);
    this.refresh(0);
  }

  refresh(delayMs = 150): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.request(), delayMs);
  }

  private post(m: { type: string; [k: string]: unknown }): void {
    if (m.type === 'error')
      this.posted.forget(); // the view shows this instead of the graph
    if (this.ready)
      void this.panel.webview.postMessage(m);
    else
      this.queued.push(m);
  }

  private async request(): Promise<void> {
    const seq = ++this.seq;
    const c = this.owner.client();
    if (!c || c.state !== State.Running) {
      this.post({ type: 'error', message: 'The tosa-lsp server is not running (TOSA: Restart Server).' });
      return;
    }
    try {
      // The preview's mode (tosaLsp.lowering.mode), as its linalg stage shows.
      const mode = vscode.workspace.getConfiguration('tosaLsp', vscode.Uri.parse(this.uri)).get<string>('lowering.mode', 'fast');
      const r = await c.sendRequest(graphRequest, graphParams(this.uri, { function: this.fn, position: this.position, stage: this.stage, mode }));
      if (seq !== this.seq)
        return; // a newer request is on its way
      if (!isGraphResult(r)) {
        this.post({ type: 'error', message: 'The server answered tosa/graph with something that is not a graph.' });
        return;
      }
      this.fn = r.function;
      this.panel.title = `Graph: @${r.function}` + (r.stage ? ` (${r.stage})` : '');
      // As JSON text: the page copies a string to its layout worker instead
      // of cloning thousands of node objects on its own thread.
      const text = JSON.stringify(r);
      if (this.posted.changed(text))
        this.post({ type: 'graph', text });
    } catch (e) {
      if (seq === this.seq)
        this.post({ type: 'error', message: graphErrorMessage(e) });
    }
  }

  private async onMessage(m: { type?: string; range?: LspRange; ms?: number; nodes?: number; stage?: string | null }): Promise<void> {
    if (m.type === 'ready') {
      this.ready = true;
      this.posted.forget(); // a new page: it shows nothing yet
      this.stage = m.stage ?? undefined; // a restored view's toggle
      for (const q of this.queued.splice(0))
        void this.panel.webview.postMessage(q);
      this.refresh(0);
      const ed = this.owner.editorFor(this.uri);
      if (ed)
        this.cursor(ed.selection.active, false);
    } else if (m.type === 'select' && m.range) {
      await this.owner.select(this.uri, m.range, this.column);
    } else if (m.type === 'stage') {
      this.stage = m.stage ?? undefined;
      this.refresh(0);
    } else if (m.type === 'rendered') {
      this.owner.log(`graph of @${this.fn}: ${m.nodes} nodes laid out and drawn in ${m.ms} ms`);
    }
  }

  cursor(p: vscode.Position, center: boolean): void {
    this.post({ type: 'cursor', position: { line: p.line, character: p.character }, center });
  }
}

export class GraphPanels implements vscode.CodeLensProvider {
  private readonly panels = new Map<string, GraphPanel>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(readonly ctx: vscode.ExtensionContext, readonly client: () => LanguageClient | undefined,
    readonly log: (line: string) => void) {}

  /** `tosaLsp.showGraph [uri, position]`: the function at the cursor. */
  async show(uri?: string | vscode.Uri, position?: LspPosition): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    const target = uri ? (typeof uri === 'string' ? uri : uri.toString()) : ed?.document.uri.toString();
    if (!target) {
      void vscode.window.showInformationMessage('TOSA: Show Graph needs an .mlir editor.');
      return;
    }
    const editor = this.editorFor(target);
    const pos = position ?? (editor ? { line: editor.selection.active.line, character: editor.selection.active.character } : { line: 0, character: 0 });
    const column = editor?.viewColumn ?? vscode.ViewColumn.One;
    const existing = this.panels.get(target);
    if (existing) {
      existing.retarget(pos, column);
      return;
    }
    this.panels.set(target, new GraphPanel(this, target, pos, column));
  }

  disposed(p: GraphPanel): void {
    if (this.panels.get(p.uri) === p)
      this.panels.delete(p.uri);
  }

  editorFor(uri: string): vscode.TextEditor | undefined {
    return vscode.window.visibleTextEditors.find(e => e.document.uri.toString() === uri);
  }

  /** A click on a node: select its range in the source editor. */
  async select(uri: string, r: LspRange, column: vscode.ViewColumn): Promise<void> {
    const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    const ed = this.editorFor(uri);
    const doc = ed?.document ?? await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const shown = await vscode.window.showTextDocument(doc, { viewColumn: ed?.viewColumn ?? column, preserveFocus: false, selection: range });
    shown.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** After each publishDiagnostics: the document's panel redraws. */
  published(uri: string): void {
    this.panels.get(uri)?.refresh();
  }

  selectionChanged(e: vscode.TextEditorSelectionChangeEvent): void {
    const p = this.panels.get(e.textEditor.document.uri.toString());
    if (p)
      p.cursor(e.selections[0].active, e.kind === vscode.TextEditorSelectionChangeKind.Mouse || e.kind === vscode.TextEditorSelectionChangeKind.Keyboard);
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (!vscode.workspace.getConfiguration('tosaLsp', doc.uri).get<boolean>('graph.codeLens', true))
      return [];
    return functionLines(doc.getText()).map(f => new vscode.CodeLens(new vscode.Range(f.line, f.character, f.line, f.character), {
      title: 'Show Graph',
      tooltip: `Draw @${f.name} as a graph beside the editor`,
      command: 'tosaLsp.showGraph',
      arguments: [doc.uri.toString(), { line: f.line, character: f.character }],
    }));
  }

  refreshLenses(): void {
    this.lensesChanged.fire();
  }

  dispose(): void {
    for (const p of [...this.panels.values()])
      p.panel.dispose();
    this.lensesChanged.dispose();
  }
}
