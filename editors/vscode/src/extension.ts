// VS Code client of tosa-lsp: starts the server (see discovery.ts), forwards
// the settings (settings.ts), and adds the lowering preview (a read-only
// `tosa-preview:` document, previewUri.ts) and native compilation with
// progress and cancellation.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as readline from 'readline';
import type { Readable } from 'stream';
import * as vscode from 'vscode';
import {
  CancellationToken as LspCancellationToken, CodeActionRequest, CodeActionTriggerKind, ExecuteCommandRequest, LanguageClient, LanguageClientOptions,
  ProtocolRequestType, ServerOptions, State, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressReport,
  WorkDoneProgressEnd,
} from 'vscode-languageclient/node';
import { BYTECODE_SCHEME } from './bytecode';
import { conversionUris, registerBytecode } from './bytecodeProvider';
import { findServer, nodeEnv } from './discovery';
import { GraphPanels } from './graphPanel';
import {
  decodePreviewQuery, encodePreviewUri, mappingAt, PREVIEW_SCHEME, PreviewMapping, PreviewTarget,
} from './previewUri';
import {
  configChangeAction, didChangeConfigurationParams, loweringMode, loweringStage, Mode, MODES, Stage, STAGES,
  toServerSettings,
  userSetGetter,
} from './settings';
import {
  applyEdits, changedLines, Edit, isReviewData, kindMatches, MIGRATE_KIND, nothingMessage, REFINE_KIND, Review,
  reviewOfAction, reviewPrompt, staleMessage,
} from './review';
import {
  compileFailureReason, compileScopes, hasSections, LogLevel, missingLibraryHint, openSettingCommand, parseLogLine, pickEntries,
  progressStep, ServerState, statusItem,
} from './ui';

interface PreviewParams {
  uri: string;
  function?: string;
  position?: { line: number; character: number };
  stage: Stage;
  mode: Mode;
}
interface PreviewResult { text: string; pipeline: string; mappings: PreviewMapping[] }
interface CompileArgs { uri: string; function?: string; emit?: string }
interface CompileResult { output: string; header?: string; symbols?: string[]; bytes?: number; log?: string }

/** Documents changed since the server last published for them. */
class Analysed {
  private readonly pending = new Map<string, (() => void)[]>();
  changed(uri: string): void {
    if (!this.pending.has(uri))
      this.pending.set(uri, []);
  }
  published(uri: string): void {
    const waiting = this.pending.get(uri);
    this.pending.delete(uri);
    for (const w of waiting ?? [])
      w();
  }
  /** Resolves once `uri` has been published after its last change, or after `ms`. */
  wait(uri: string, ms: number): Promise<void> {
    const waiting = this.pending.get(uri);
    if (!waiting)
      return Promise.resolve();
    return new Promise(resolve => {
      const t = setTimeout(resolve, ms);
      waiting.push(() => { clearTimeout(t); resolve(); });
    });
  }
}
const analysed = new Analysed();

const previewRequest = new ProtocolRequestType<PreviewParams, PreviewResult, never, void, void>('tosa/previewLowering');

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let context: vscode.ExtensionContext;
let preview: PreviewProvider;
let status: vscode.StatusBarItem;
let graphs: GraphPanels;

function setStatus(state: ServerState, detail?: string): void {
  const s = statusItem(state, detail);
  status.text = s.text;
  status.tooltip = s.tooltip;
  status.backgroundColor = s.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  status.show();
}

/** The server's last stderr lines: why it did not start, when it did not. */
let recentStderr: string[] = [];

/** The server's stderr, at the level its logger gave each line (see parseLogLine). */
function pipeServerLog(input: Readable, channel: vscode.LogOutputChannel): void {
  let level: LogLevel = 'info';
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false })
    .on('line', line => {
      recentStderr.push(line);
      if (recentStderr.length > 20)
        recentStderr.shift();
      const l = parseLogLine(line, level);
      level = l.level;
      channel[l.level](l.text);
    });
}

const timingLog = process.env.TOSA_LSP_VSCODE_TIMING_LOG;

/** One JSON line per event, for the editor benchmark (off unless the variable is set). */
function timing(event: string, fields: Record<string, unknown>): void {
  if (!timingLog)
    return;
  try {
    fs.appendFileSync(timingLog, JSON.stringify({ t: Date.now(), event, ...fields }) + '\n');
  } catch {
    // A benchmark aid: never in the user's way.
  }
}

function config(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('tosaLsp', scope);
}

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.find(f => f.uri.scheme === 'file')?.uri.fsPath;
}

function serverSettings() {
  const c = config();
  return toServerSettings(userSetGetter(c), { workspaceFolder: workspaceFolder(), userHome: os.homedir() });
}

async function startClient(): Promise<void> {
  const c = config();
  setStatus('starting');
  const found = findServer(c.get<string>('serverPath'), nodeEnv(context.extensionPath, workspaceFolder()), process.env);
  if (!found.ok) {
    output.appendLine(found.message);
    output.appendLine('Tried:\n  ' + found.tried.join('\n  '));
    setStatus('error', found.message);
    const choice = await vscode.window.showErrorMessage(found.message, 'Open Setting', 'Show Output');
    if (choice === 'Open Setting') {
      const open = openSettingCommand(vscode.env.remoteName, 'tosaLsp.serverPath');
      void vscode.commands.executeCommand(open.command, open.args);
    } else if (choice === 'Show Output') {
      output.show();
    }
    return;
  }
  output.appendLine(`Using ${found.path} (${found.source === 'setting' ? 'tosaLsp.serverPath' : found.source === 'path' ? 'PATH' : 'bundled with the extension'})`);
  const args = c.get<string[]>('serverArgs') ?? [];
  const serverOptions: ServerOptions = { command: found.path, args, options: { cwd: workspaceFolder() } };
  recentStderr = [];
  const clientOptions: LanguageClientOptions = {
    // `.mlirbc` files as text (bytecodeProvider.ts) are documents too.
    documentSelector: [{ scheme: 'file', language: 'mlir' }, { scheme: 'untitled', language: 'mlir' },
      { scheme: BYTECODE_SCHEME, language: 'mlir' }],
    initializationOptions: serverSettings(),
    outputChannel: output,
    stdioOptions: { stdout: pipeServerLog, stderr: pipeServerLog },
    middleware: {
      // The server's code-action commands: run them through the extension's
      // UI (virtual preview, progress notification) instead of the server's
      // fallback for plugin-less editors (a temp file + showDocument).
      executeCommand: async (command, args, next) => {
        if (command === 'tosa.previewLowering' && args[0] && typeof args[0] === 'object') {
          const a = args[0] as Partial<PreviewParams>;
          return openPreview({
            source: String(a.uri),
            function: a.function,
            stage: (STAGES as readonly unknown[]).includes(a.stage) ? a.stage! : loweringStage(k => config().get(k)),
            mode: (MODES as readonly unknown[]).includes(a.mode) ? a.mode! : loweringMode(k => config().get(k)),
          });
        }
        if (command === 'tosa.compile' && args[0] && typeof args[0] === 'object')
          return compile(args[0] as CompileArgs);
        return next(command, args);
      },
      // Timestamps for bench/editor/vscode_timing.js (only with
      // TOSA_LSP_VSCODE_TIMING_LOG set): when the client handles a publish
      // and gets inlay hints; for a clean file nothing else shows it.
      didOpen: (document, next) => {
        timing('didOpen', { uri: document.uri.toString(), version: document.version });
        return next(document);
      },
      provideDocumentSymbols: async (document, token, next) => {
        timing('symbols?', {});
        const symbols = await next(document, token);
        timing('symbols', { n: symbols?.length ?? 0 });
        return symbols;
      },
      didChange: async (e, next) => {
        timing('didChange', { version: e.document.version });
        if (e.contentChanges.length > 0)
          analysed.changed(e.document.uri.toString());
        return next(e);
      },
      // Requests about the text just typed wait (briefly) for the server's
      // analysis of it: answered from the previous text, a completion after
      // `tosa.` lists values, and edits would not fit the buffer.
      provideCompletionItem: async (document, position, ctx, token, next) => {
        await analysed.wait(document.uri.toString(), 1000);
        return next(document, position, ctx, token);
      },
      provideSignatureHelp: async (document, position, ctx, token, next) => {
        await analysed.wait(document.uri.toString(), 1000);
        return next(document, position, ctx, token);
      },
      provideDocumentFormattingEdits: async (document, options, token, next) => {
        await analysed.wait(document.uri.toString(), 3000);
        return next(document, options, token);
      },
      provideDocumentRangeFormattingEdits: async (document, range, options, token, next) => {
        await analysed.wait(document.uri.toString(), 3000);
        return next(document, range, options, token);
      },
      prepareRename: async (document, position, token, next) => {
        await analysed.wait(document.uri.toString(), 3000);
        return next(document, position, token);
      },
      handleDiagnostics: (uri, diagnostics, next) => {
        timing('publish', { uri: uri.toString(), diagnostics: diagnostics.length });
        // A save's conversion of a `.mlirbc` text: not a document the user has.
        if (conversionUris.has(uri.toString()))
          return;
        analysed.published(uri.toString());
        next(uri, diagnostics);
        graphs.published(uri.toString());
      },
      provideInlayHints: async (document, range, token, next) => {
        timing('inlayHints?', { from: range.start.line, to: range.end.line });
        const hints = await next(document, range, token);
        timing('inlayHints', { uri: document.uri.toString(), hints: hints?.length ?? 0 });
        return hints;
      },
      // Whole-file rewrites (`data: {review: true}`): choosing one opens a
      // review (diff + Apply) instead of applying the edit.
      provideCodeActions: async (document, range, ctx, token, next) => {
        const version = document.version;
        timing('codeActions?', { line: range.start.line, only: ctx.only?.value });
        const actions = await next(document, range, ctx, token);
        timing('codeActions', { n: actions?.length ?? 0 });
        return actions?.map(a => (a instanceof vscode.CodeAction ? asReviewAction(a, document, version) : a));
      },
    },
  };
  client = new LanguageClient('tosaLsp', 'TOSA LSP', serverOptions, clientOptions);
  const started = client;
  let ran = false;
  let reported = false;
  // A server that never starts (e.g. the loader misses libMLIR): once, with
  // what to install when its stderr says so.
  const reportStartFailure = async (e?: unknown) => {
    if (reported || ran)
      return;
    reported = true;
    setStatus('error', `${found.path} failed to start`);
    // The loader's message may still be on its way from the pipe.
    await new Promise(resolve => setTimeout(resolve, 300));
    const hint = missingLibraryHint(recentStderr.join('\n'));
    const why = recentStderr.find(l => /error while loading shared libraries|GLIBCXX/.test(l));
    const msg = hint ? `${hint}. ${why ?? ''}`.trim() : `tosa-lsp failed to start${e ? `: ${e}` : ' (see the output)'}`;
    output.appendLine(msg);
    void vscode.window.showErrorMessage(msg, 'Show Output').then(c => c && output.show());
  };
  client.onDidChangeState(e => {
    if (client !== started)
      return; // a replaced client's last words
    if (e.newState === State.Stopped && !ran)
      void reportStartFailure();
    if (e.newState === State.Running) {
      ran = true;
      setStatus('running', found.path);
      preview.refreshAll();
    } else {
      setStatus(e.newState === State.Starting ? 'starting' : 'stopped');
    }
  });
  try {
    timing('start', { server: found.path });
    await client.start();
    timing('started', {});
  } catch (e) {
    output.appendLine(`Failed to start ${found.path}: ${e}`);
    await reportStartFailure(e);
  }
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c)
    await c.stop().catch(() => undefined);
}

async function restart(): Promise<void> {
  await stopClient();
  await startClient();
}

function requireClient(): LanguageClient | undefined {
  if (client && client.state === State.Running)
    return client;
  void vscode.window.showErrorMessage('The tosa-lsp server is not running.', 'Restart Server', 'Show Output')
    .then(c => {
      if (c === 'Restart Server')
        void restart();
      else if (c === 'Show Output')
        output.show();
    });
  return undefined;
}

// --- Lowering preview -------------------------------------------------------

class PreviewProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Last answer per preview URI (for the mappings). */
  readonly results = new Map<string, PreviewResult>();
  private timers = new Map<string, NodeJS.Timeout>();

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const t = decodePreviewQuery(uri.query);
    if (!t)
      return '// Invalid preview URI.\n';
    const header = `// Lowering preview of ${t.function ? '@' + t.function : 'the whole file'} ` +
      `(stage ${t.stage}, mode ${t.mode}) — read-only, follows the source.\n`;
    const c = client;
    if (!c || c.state !== State.Running)
      return header + '// The tosa-lsp server is not running (TOSA: Restart Server).\n';
    try {
      // The source must be open for the server to know it.
      const doc = vscode.workspace.textDocuments.find(d => d.uri.toString() === t.source);
      if (!doc)
        await vscode.workspace.openTextDocument(vscode.Uri.parse(t.source));
      const params: PreviewParams = { uri: t.source, stage: t.stage, mode: t.mode };
      if (t.function)
        params.function = t.function;
      const r = await c.sendRequest(previewRequest, params, token);
      // Mappings are relative to r.text: shift them by the header line.
      const shifted = r.mappings.map(m => ({ ...m, previewPosition: { ...m.previewPosition, line: m.previewPosition.line + 1 } }));
      this.results.set(uri.toString(), { ...r, mappings: shifted });
      return header + r.text;
    } catch (e) {
      this.results.delete(uri.toString());
      const msg = e instanceof Error ? e.message : String(e);
      return header + msg.split('\n').map(l => '// ' + l).join('\n') + '\n';
    }
  }

  /** Refresh (debounced) every open preview of `source`. */
  sourceChanged(source: string): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== PREVIEW_SCHEME || decodePreviewQuery(doc.uri.query)?.source !== source)
        continue;
      const key = doc.uri.toString();
      clearTimeout(this.timers.get(key));
      this.timers.set(key, setTimeout(() => {
        this.timers.delete(key);
        this.changed.fire(doc.uri);
      }, 400));
    }
  }

  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments)
      if (doc.uri.scheme === PREVIEW_SCHEME)
        this.changed.fire(doc.uri);
  }

  dispose(): void {
    for (const t of this.timers.values())
      clearTimeout(t);
    this.changed.dispose();
  }
}

async function openPreview(t: PreviewTarget, column = vscode.ViewColumn.Beside): Promise<void> {
  const uri = vscode.Uri.parse(encodePreviewUri(t));
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== 'mlir')
    await vscode.languages.setTextDocumentLanguage(doc, 'mlir').then(undefined, () => undefined);
  await vscode.window.showTextDocument(doc, { viewColumn: column, preview: false, preserveFocus: true });
}

/** A picker whose focus starts on the current choice, so Enter keeps it. */
function pick<T extends string>(items: readonly T[], current: T, title: string,
                                describe: Record<string, string>): Promise<T | undefined> {
  const { entries, active } = pickEntries(items, current, describe);
  const qp = vscode.window.createQuickPick<vscode.QuickPickItem>();
  qp.title = title;
  qp.placeholder = current;
  qp.items = entries;
  if (active)
    qp.activeItems = [active];
  return new Promise(resolve => {
    let chosen: T | undefined;
    qp.onDidAccept(() => {
      chosen = qp.selectedItems[0]?.label as T | undefined;
      qp.hide();
    });
    qp.onDidHide(() => {
      qp.dispose();
      resolve(chosen);
    });
    qp.show();
  });
}

const STAGE_INFO: Record<string, string> = {
  linalg: 'tosa-to-linalg(-named), tosa-to-arith, tosa-to-tensor',
  vector: '+ matmuls and convolutions tiled, packed and vectorised to FMAs',
  loops: '+ one-shot-bufferize, convert-linalg-to-loops',
  llvm: '+ deallocation and conversion to the LLVM dialect',
};
const MODE_INFO: Record<string, string> = {
  fast: 'what Compile builds: element-wise fusion, contiguous memrefs, vectorised loops',
  upstream: "MLIR's own lowering (mismatching runtime shapes are undefined behaviour)",
  safe: 'cf.assert before each element-wise op whose runtime sizes could disagree',
  versioned: 'versions element-wise ops on could-be-1 dynamic dims (copy-free broadcasting)',
};

/** `tosaLsp.previewLowering`: from a source editor or from a preview. */
async function previewLoweringCommand(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor)
    return void vscode.window.showInformationMessage('Open an MLIR file first.');
  let base: PreviewTarget;
  let inPreview = false;
  if (editor.document.uri.scheme === PREVIEW_SCHEME) {
    const t = decodePreviewQuery(editor.document.uri.query);
    if (!t)
      return;
    base = t;
    inPreview = true;
  } else {
    if (editor.document.languageId !== 'mlir')
      return void vscode.window.showInformationMessage('TOSA: Preview Lowering works on MLIR files.');
    const c = requireClient();
    if (!c)
      return;
    const get = (k: string) => config(editor.document.uri).get(k);
    base = { source: editor.document.uri.toString(), stage: loweringStage(get), mode: loweringMode(get) };
    const fn = await functionAt(editor.document, editor.selection.active);
    if (fn)
      base.function = fn;
  }
  const stage = await pick(STAGES, base.stage, 'Lowering stage', STAGE_INFO);
  if (!stage)
    return;
  const mode = await pick(MODES, base.mode, 'Lowering mode', MODE_INFO);
  if (!mode)
    return;
  const target = { ...base, stage, mode };
  if (inPreview) {
    const column = editor.viewColumn;
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await openPreview(target, column);
  } else {
    await openPreview(target);
  }
}

/** The function around `pos`, from the server's document symbols. */
async function functionAt(doc: vscode.TextDocument, pos: vscode.Position): Promise<string | undefined> {
  const symbols = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>(
    'vscode.executeDocumentSymbolProvider', doc.uri).then(s => s ?? [], () => []);
  let best: string | undefined;
  const visit = (list: (vscode.DocumentSymbol | vscode.SymbolInformation)[]) => {
    for (const s of list) {
      const range = 'range' in s ? s.range : s.location.range;
      if (!range.contains(pos))
        continue;
      if (s.kind === vscode.SymbolKind.Function || s.kind === vscode.SymbolKind.Method)
        best = s.name.replace(/^@/, '');
      if ('children' in s && s.children)
        visit(s.children);
    }
  };
  visit(symbols);
  return best;
}

let sourceHighlight: vscode.TextEditorDecorationType;

/** Cursor moves in a preview: reveal the source op of a mapped line. */
function onPreviewSelection(e: vscode.TextEditorSelectionChangeEvent): void {
  const doc = e.textEditor.document;
  if (doc.uri.scheme !== PREVIEW_SCHEME)
    return;
  const t = decodePreviewQuery(doc.uri.query);
  const r = preview.results.get(doc.uri.toString());
  if (!t || !r)
    return;
  const pos = e.selections[0].active;
  const m = mappingAt(r.mappings, pos.line, pos.character);
  if (!m)
    return;
  const target = vscode.window.visibleTextEditors.find(ed => ed.document.uri.toString() === t.source);
  const at = new vscode.Position(m.sourcePosition.line, m.sourcePosition.character);
  const range = new vscode.Range(at, at);
  if (target) {
    target.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    target.setDecorations(sourceHighlight, [range]);
    // Only explicit clicks/keys move the source cursor; not the ones we cause.
    if (e.kind === vscode.TextEditorSelectionChangeKind.Mouse || e.kind === vscode.TextEditorSelectionChangeKind.Keyboard)
      target.selection = new vscode.Selection(at, at);
  } else if (e.kind === vscode.TextEditorSelectionChangeKind.Mouse) {
    void vscode.window.showTextDocument(vscode.Uri.parse(t.source),
      { selection: range, preserveFocus: true, viewColumn: vscode.ViewColumn.One });
  }
}

// --- Compile ----------------------------------------------------------------

async function compileCommand(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'mlir' || editor.document.uri.scheme === PREVIEW_SCHEME)
    return void vscode.window.showInformationMessage('TOSA: Compile works on an MLIR source file.');
  if (!requireClient())
    return;
  const fn = await functionAt(editor.document, editor.selection.active);
  const scopes = compileScopes(fn, path.basename(editor.document.uri.path), hasSections(editor.document.getText()));
  if (scopes.length === 0)
    return void vscode.window.showInformationMessage(
      'TOSA: Compile: this file has // ----- sections; put the cursor in the function to compile.');
  const scope = await vscode.window.showQuickPick(scopes, { title: 'Compile what?' });
  if (!scope)
    return;
  const emit = await vscode.window.showQuickPick(
    [
      { label: 'shared', description: 'shared library (.so) + C header' },
      { label: 'obj', description: 'x86-64 object file' },
      { label: 'asm', description: 'assembly' },
      { label: 'llvm-ir', description: 'LLVM IR' },
      { label: 'mlir-llvm', description: 'MLIR LLVM dialect' },
    ], { title: 'Output kind' });
  if (!emit)
    return;
  await compile({ uri: editor.document.uri.toString(), function: scope.fn, emit: emit.label });
}

async function compile(args: CompileArgs): Promise<CompileResult | undefined> {
  const c = requireClient();
  if (!c)
    return undefined;
  const token = `tosa-vscode-compile-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const what = args.function ? `@${args.function}` : path.basename(vscode.Uri.parse(args.uri).path);
  let result: CompileResult;
  try {
    result = await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification,
      title: `Compiling ${what}`,
      cancellable: true,
    }, async (progress, cancel) => {
      const sub = c.onProgress(WorkDoneProgress.type, token,
        (v: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) => {
          if (v.kind !== 'end' && v.message)
            progress.report({ message: progressStep(v.message) });
        });
      try {
        return await c.sendRequest(ExecuteCommandRequest.type,
          { command: 'tosa.compile', arguments: [args], workDoneToken: token },
          cancel as unknown as LspCancellationToken) as CompileResult;
      } finally {
        sub.dispose();
      }
    });
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/cancel/i.test(msg)) {
      void vscode.window.showInformationMessage(`Compilation of ${what} cancelled.`);
    } else {
      output.appendLine(`Compilation of ${what} failed:\n${msg}`);
      void vscode.window.showErrorMessage(`Compilation of ${what} failed: ${compileFailureReason(msg)}`, 'Show Output')
        .then(ch => ch && output.show());
    }
    return undefined;
  }
  if (result.log)
    output.appendLine(result.log);
  output.appendLine(`Compiled ${what} -> ${result.output}` + (result.header ? ` (header ${result.header})` : ''));
  const size = typeof result.bytes === 'number' ? ` (${result.bytes} bytes)` : '';
  void vscode.window.showInformationMessage(`Compiled ${what}: ${result.output}${size}`, 'Reveal', 'Copy path')
    .then(choice => {
      if (choice === 'Reveal')
        void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(result.output));
      else if (choice === 'Copy path')
        void vscode.env.clipboard.writeText(result.output);
    });
  return result;
}

// --- Reviewed whole-file rewrites --------------------------------------------
//
// "Migrate this file to MLIR 22 TOSA" and "Refine all shapes in @f" come as
// code actions with `data: {review: true}` and a versioned edit of the whole
// file. Choosing one (lightbulb, Source Action…, or the palette commands
// below) opens a diff of the current text against the rewritten text (a
// read-only `tosa-review:` document) with Apply / Discard in a notification
// and in the diff's title bar. Apply applies the edit only to the version it
// was computed for; closing the diff discards it.

const REVIEW_SCHEME = 'tosa-review';

interface PendingReview extends Review {
  version: number;
  source: vscode.Uri;
  reviewUri: vscode.Uri;
  newText: string;
}

class ReviewProvider implements vscode.TextDocumentContentProvider {
  /** Open reviews by the URI of their rewritten text. */
  readonly pending = new Map<string, PendingReview>();
  private texts = new Map<string, string>();
  private counter = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '// This review is closed (applied or discarded).\n';
  }

  add(r: Review, source: vscode.Uri, version: number, newText: string): PendingReview {
    // The source's path (so the tab and the language follow it); the query
    // tells reviews apart.
    const reviewUri = source.with({ scheme: REVIEW_SCHEME, query: `review=${++this.counter}`, fragment: '' });
    const p: PendingReview = { ...r, version, source, reviewUri, newText };
    this.pending.set(reviewUri.toString(), p);
    this.texts.set(reviewUri.toString(), newText);
    return p;
  }

  forgetText(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }
}

let reviews: ReviewProvider;

function lspRange(r: vscode.Range): Edit['range'] {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function vscodeRange(r: Edit['range']): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

/** A code action to review: its edit becomes the `tosaLsp.review` command. */
function asReviewAction(a: vscode.CodeAction, document: vscode.TextDocument, version: number): vscode.CodeAction {
  if (!isReviewData((a as { data?: unknown }).data) || !a.edit)
    return a;
  const entries = a.edit.entries();
  if (entries.length !== 1)
    return a;
  const [uri, edits] = entries[0];
  const review: Review = {
    title: a.title,
    uri: uri.toString(),
    // The document's version when the actions were asked for: the server
    // computed them for it (the client sends changes before requests).
    version: uri.toString() === document.uri.toString() ? version : null,
    edits: edits.map(e => ({ range: lspRange(e.range), newText: e.newText })),
  };
  a.edit = undefined;
  a.command = { title: a.title, command: 'tosaLsp.review', arguments: [review] };
  return a;
}

function sourceDocument(uri: string): vscode.TextDocument | undefined {
  const want = vscode.Uri.parse(uri).toString();
  return vscode.workspace.textDocuments.find(d => d.uri.toString() === want);
}

/** Opens the review of `r`: the diff, and the notification with Apply. */
async function startReview(r: Review): Promise<void> {
  const doc = sourceDocument(r.uri) ?? await vscode.workspace.openTextDocument(vscode.Uri.parse(r.uri));
  const file = path.basename(doc.uri.path);
  if (r.version !== null && doc.version !== r.version)
    return void vscode.window.showWarningMessage(staleMessage(file, r.title));
  const old = doc.getText();
  let newText: string;
  try {
    newText = applyEdits(old, r.edits);
  } catch (e) {
    output.appendLine(`${r.title}: ${JSON.stringify(r.edits).slice(0, 2000)}`);
    return void vscode.window.showErrorMessage(`${r.title}: the server's edit does not apply to ${file} (${e instanceof Error ? e.message : e}).`);
  }
  if (newText === old)
    return void vscode.window.showInformationMessage(`${r.title}: nothing would change in ${file}.`);
  const p = reviews.add(r, doc.uri, doc.version, newText);
  output.appendLine(`Review: ${r.title} (${file} version ${doc.version}, ${r.edits.length} edits)`);
  const rewritten = await vscode.workspace.openTextDocument(p.reviewUri);
  if (rewritten.languageId !== doc.languageId)
    await vscode.languages.setTextDocumentLanguage(rewritten, doc.languageId).then(undefined, () => undefined);
  await vscode.commands.executeCommand('vscode.diff', doc.uri, p.reviewUri,
    `${file} ↔ ${r.title} (review)`, { preview: false });
  // Not awaited: the notification stays until answered; the diff's title
  // bar has the same two buttons.
  void vscode.window.showInformationMessage(reviewPrompt(r.title, r.edits.length, changedLines(old, newText)),
    'Apply', 'Discard').then(choice => {
    if (choice)
      void settleReview(p.reviewUri, choice === 'Apply');
  });
}

/** The review shown in the active editor (a diff whose right side is a review). */
function activeReviewUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === REVIEW_SCHEME)
    return input.modified;
  const doc = vscode.window.activeTextEditor?.document;
  return doc?.uri.scheme === REVIEW_SCHEME ? doc.uri : undefined;
}

async function closeReviewTabs(reviewUri: vscode.Uri): Promise<void> {
  const key = reviewUri.toString();
  const tabs = vscode.window.tabGroups.all.flatMap(g => g.tabs).filter(t =>
    (t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === key) ||
    (t.input instanceof vscode.TabInputText && t.input.uri.toString() === key));
  if (tabs.length)
    await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
  reviews.forgetText(reviewUri);
}

/** Apply (only to the reviewed version) or discard a review; closes its diff. */
async function settleReview(uri: vscode.Uri | undefined, apply: boolean): Promise<void> {
  const reviewUri = uri instanceof vscode.Uri && uri.scheme === REVIEW_SCHEME ? uri : activeReviewUri();
  const p = reviewUri && reviews.pending.get(reviewUri.toString());
  if (!p) {
    if (apply)
      void vscode.window.showInformationMessage('This review is closed: nothing applied. Run the action again.');
    return;
  }
  reviews.pending.delete(p.reviewUri.toString());
  const file = path.basename(p.source.path);
  if (!apply) {
    output.appendLine(`Review discarded: ${p.title}`);
    return closeReviewTabs(p.reviewUri);
  }
  const doc = sourceDocument(p.source.toString());
  if (!doc || doc.version !== p.version) {
    output.appendLine(`Review not applied (${file} is at version ${doc?.version}, reviewed ${p.version}): ${p.title}`);
    await closeReviewTabs(p.reviewUri);
    return void vscode.window.showWarningMessage(staleMessage(file, p.title));
  }
  const edit = new vscode.WorkspaceEdit();
  edit.set(doc.uri, p.edits.map(e => new vscode.TextEdit(vscodeRange(e.range), e.newText)));
  const ok = await vscode.workspace.applyEdit(edit);
  await closeReviewTabs(p.reviewUri);
  if (!ok)
    return void vscode.window.showErrorMessage(`${p.title}: VS Code did not apply the edit to ${file}.`);
  output.appendLine(`Review applied: ${p.title} (${file} version ${p.version} -> ${doc.version})`);
  await vscode.window.showTextDocument(doc, { preview: false });
  vscode.window.setStatusBarMessage(`$(check) Applied: ${p.title}`, 5000);
}

/** Closing a review's diff discards it. */
function onTabsChanged(e: vscode.TabChangeEvent): void {
  for (const t of e.closed) {
    const uri = t.input instanceof vscode.TabInputTextDiff ? t.input.modified
      : t.input instanceof vscode.TabInputText ? t.input.uri : undefined;
    if (uri?.scheme !== REVIEW_SCHEME)
      continue;
    const stillOpen = vscode.window.tabGroups.all.some(g => g.tabs.some(o =>
      (o.input instanceof vscode.TabInputTextDiff && o.input.modified.toString() === uri.toString()) ||
      (o.input instanceof vscode.TabInputText && o.input.uri.toString() === uri.toString())));
    if (!stillOpen && reviews.pending.delete(uri.toString())) {
      output.appendLine(`Review closed without applying: ${uri.query}`);
      reviews.forgetText(uri);
    }
  }
}

/** "TOSA: Migrate File…" / "TOSA: Refine All Shapes…": ask the server for that action at the cursor. */
async function wholeFileCommand(kind: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const doc = editor?.document;
  if (!editor || !doc || doc.languageId !== 'mlir' || (doc.uri.scheme !== 'file' && doc.uri.scheme !== 'untitled'))
    return void vscode.window.showInformationMessage('TOSA: open an MLIR source file first.');
  const c = requireClient();
  if (!c)
    return;
  const file = path.basename(doc.uri.path);
  const params = {
    textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) },
    range: c.code2ProtocolConverter.asRange(editor.selection),
    context: { diagnostics: [], only: [kind], triggerKind: CodeActionTriggerKind.Invoked },
  };
  let answer: unknown[] | null;
  try {
    answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: kind === MIGRATE_KIND ? 'TOSA: migrating' : 'TOSA: refining shapes' },
      () => c.sendRequest(CodeActionRequest.type, params) as Promise<unknown[] | null>);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    output.appendLine(`textDocument/codeAction (${kind}) failed: ${msg}`);
    return void vscode.window.showErrorMessage(`TOSA: the server failed to answer: ${msg}`, 'Show Output')
      .then(ch => ch && output.show());
  }
  const found = (answer ?? []).filter(a => kindMatches((a as { kind?: unknown }).kind, kind))
    .map(reviewOfAction).filter((r): r is Review => r !== undefined);
  if (found.length === 0) {
    const fn = kind === REFINE_KIND ? await functionAt(doc, editor.selection.active) : undefined;
    return void vscode.window.showInformationMessage(nothingMessage(kind, file, fn));
  }
  let chosen: Review | undefined = found[0];
  if (found.length > 1) {
    const item = await vscode.window.showQuickPick(found.map(r => ({ label: r.title, review: r })), { title: 'Which rewrite?' });
    chosen = item?.review;
  }
  if (chosen)
    await startReview(chosen);
}

// --- Activation -------------------------------------------------------------

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  timing('activate', {});
  context = ctx;
  output = vscode.window.createOutputChannel('TOSA LSP', { log: true });
  preview = new PreviewProvider();
  reviews = new ReviewProvider();
  status = vscode.window.createStatusBarItem('tosaLsp.status', vscode.StatusBarAlignment.Left);
  status.name = 'TOSA LSP';
  status.command = 'tosaLsp.showOutput';
  sourceHighlight = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    isWholeLine: true,
  });
  graphs = new GraphPanels(ctx, () => client, line => output.info(line));
  registerBytecode(ctx, () => client, line => output.info(line));
  ctx.subscriptions.push(
    output, preview, sourceHighlight, status, graphs,
    vscode.commands.registerCommand('tosaLsp.showGraph', (uri?: string | vscode.Uri, position?: { line: number; character: number }) =>
      graphs.show(uri, position)),
    vscode.languages.registerCodeLensProvider([{ scheme: 'file', language: 'mlir' }, { scheme: 'untitled', language: 'mlir' }], graphs),
    vscode.window.onDidChangeTextEditorSelection(e => graphs.selectionChanged(e)),
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, preview),
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, reviews),
    vscode.commands.registerCommand('tosaLsp.review', (r: Review) => startReview(r)),
    vscode.commands.registerCommand('tosaLsp.applyReview', (uri?: vscode.Uri) => settleReview(uri, true)),
    vscode.commands.registerCommand('tosaLsp.discardReview', (uri?: vscode.Uri) => settleReview(uri, false)),
    vscode.commands.registerCommand('tosaLsp.migrateFile', () => wholeFileCommand(MIGRATE_KIND)),
    vscode.commands.registerCommand('tosaLsp.refineShapes', () => wholeFileCommand(REFINE_KIND)),
    vscode.window.tabGroups.onDidChangeTabs(onTabsChanged),
    vscode.commands.registerCommand('tosaLsp.previewLowering', previewLoweringCommand),
    vscode.commands.registerCommand('tosaLsp.compile', compileCommand),
    vscode.commands.registerCommand('tosaLsp.restartServer', restart),
    vscode.commands.registerCommand('tosaLsp.showOutput', () => output.show()),
    vscode.workspace.onDidChangeTextDocument(e => {
      if (e.document.uri.scheme !== PREVIEW_SCHEME && e.contentChanges.length > 0)
        preview.sourceChanged(e.document.uri.toString());
    }),
    vscode.workspace.onDidCloseTextDocument(d => {
      if (d.uri.scheme === PREVIEW_SCHEME)
        preview.results.delete(d.uri.toString());
    }),
    vscode.window.onDidChangeTextEditorSelection(onPreviewSelection),
    vscode.workspace.onDidChangeConfiguration(async e => {
      const action = configChangeAction(k => e.affectsConfiguration(k));
      if (action === 'none')
        return;
      if (action === 'restart') {
        await restart();
        return;
      }
      if (client && client.state === State.Running) {
        await client.sendNotification('workspace/didChangeConfiguration',
          didChangeConfigurationParams(serverSettings()));
        preview.refreshAll();
      }
    }),
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
