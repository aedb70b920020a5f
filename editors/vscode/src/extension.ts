// VS Code client of tosa-lsp: starts the server (see discovery.ts), forwards
// the settings (settings.ts), and adds the lowering preview (a read-only
// `tosa-preview:` document, previewUri.ts) and native compilation with
// progress and cancellation.
import * as os from 'os';
import * as path from 'path';
import * as readline from 'readline';
import type { Readable } from 'stream';
import * as vscode from 'vscode';
import {
  CancellationToken as LspCancellationToken, ExecuteCommandRequest, LanguageClient, LanguageClientOptions,
  ProtocolRequestType, ServerOptions, State, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressReport,
  WorkDoneProgressEnd,
} from 'vscode-languageclient/node';
import { findServer, nodeEnv } from './discovery';
import {
  decodePreviewQuery, encodePreviewUri, mappingAt, PREVIEW_SCHEME, PreviewMapping, PreviewTarget,
} from './previewUri';
import {
  configChangeAction, didChangeConfigurationParams, loweringMode, loweringStage, Mode, MODES, Stage, STAGES,
  toServerSettings,
  userSetGetter,
} from './settings';
import {
  compileFailureReason, compileScopes, hasSections, LogLevel, openSettingCommand, parseLogLine, pickEntries,
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

const previewRequest = new ProtocolRequestType<PreviewParams, PreviewResult, never, void, void>('tosa/previewLowering');

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let context: vscode.ExtensionContext;
let preview: PreviewProvider;
let status: vscode.StatusBarItem;

function setStatus(state: ServerState, detail?: string): void {
  const s = statusItem(state, detail);
  status.text = s.text;
  status.tooltip = s.tooltip;
  status.backgroundColor = s.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  status.show();
}

/** The server's stderr, at the level its logger gave each line (see parseLogLine). */
function pipeServerLog(input: Readable, channel: vscode.LogOutputChannel): void {
  let level: LogLevel = 'info';
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false })
    .on('line', line => {
      const l = parseLogLine(line, level);
      level = l.level;
      channel[l.level](l.text);
    });
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
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'mlir' }, { scheme: 'untitled', language: 'mlir' }],
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
    },
  };
  client = new LanguageClient('tosaLsp', 'TOSA LSP', serverOptions, clientOptions);
  const started = client;
  client.onDidChangeState(e => {
    if (client !== started)
      return; // a replaced client's last words
    if (e.newState === State.Running) {
      setStatus('running', found.path);
      preview.refreshAll();
    } else {
      setStatus(e.newState === State.Starting ? 'starting' : 'stopped');
    }
  });
  try {
    await client.start();
  } catch (e) {
    setStatus('error', `${found.path} failed to start`);
    output.appendLine(`Failed to start ${found.path}: ${e}`);
    void vscode.window.showErrorMessage(`tosa-lsp failed to start: ${e}`, 'Show Output')
      .then(c => c && output.show());
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

// --- Activation -------------------------------------------------------------

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  context = ctx;
  output = vscode.window.createOutputChannel('TOSA LSP', { log: true });
  preview = new PreviewProvider();
  status = vscode.window.createStatusBarItem('tosaLsp.status', vscode.StatusBarAlignment.Left);
  status.name = 'TOSA LSP';
  status.command = 'tosaLsp.showOutput';
  sourceHighlight = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    isWholeLine: true,
  });
  ctx.subscriptions.push(
    output, preview, sourceHighlight, status,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, preview),
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
