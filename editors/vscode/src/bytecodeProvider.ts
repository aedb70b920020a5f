// `.mlirbc` files open as MLIR text: a custom editor for `*.mlirbc` replaces
// itself with the text document `tosa-mlirbc:<same path>`, whose file system
// (below) reads the bytecode through the server's `mlir/convertFromBytecode`
// and writes it back through `mlir/convertToBytecode` (the names and
// parameters of mlir-lsp-server's requests). The text document is an
// ordinary `mlir` document for the language client: diagnostics, hovers
// and the rest work on it. Saving writes the file only when the server
// answered bytecode; any failure leaves the file as it was.
import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import {
  BYTECODE_SCHEME, bytecodeOfResult, failurePage, openFailure, saveFailure, textOfResult,
} from './bytecode';

function fileUri(uri: vscode.Uri): vscode.Uri {
  return uri.with({ scheme: 'file' });
}

/** URIs the server holds only for a save's conversion: their diagnostics
 * are not the user's (the extension's middleware drops them). */
export const conversionUris = new Set<string>();

class BytecodeFS implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /** Why the last read of a URI failed (what the editor shows). */
  readonly failures = new Map<string, string>();

  constructor(private readonly client: () => Promise<LanguageClient | undefined>, private readonly log: (line: string) => void) {}

  stat(uri: vscode.Uri): Thenable<vscode.FileStat> {
    return vscode.workspace.fs.stat(fileUri(uri));
  }
  readDirectory(uri: vscode.Uri): Thenable<[string, vscode.FileType][]> {
    return vscode.workspace.fs.readDirectory(fileUri(uri));
  }
  createDirectory(uri: vscode.Uri): Thenable<void> {
    return vscode.workspace.fs.createDirectory(fileUri(uri));
  }
  delete(uri: vscode.Uri, options: { recursive: boolean }): Thenable<void> {
    return vscode.workspace.fs.delete(fileUri(uri), options);
  }
  rename(from: vscode.Uri, to: vscode.Uri, options: { overwrite: boolean }): Thenable<void> {
    return vscode.workspace.fs.rename(fileUri(from), fileUri(to), options);
  }
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const file = path.basename(uri.path);
    const c = await this.client();
    if (!c)
      throw vscode.FileSystemError.Unavailable(openFailure(file, 'the tosa-lsp server is not running'));
    try {
      const text = textOfResult(await c.sendRequest('mlir/convertFromBytecode', { uri: fileUri(uri).toString() }));
      this.failures.delete(uri.toString());
      this.log(`${file}: bytecode read as ${text.length} characters of text`);
      return new TextEncoder().encode(text);
    } catch (e) {
      const msg = openFailure(file, e);
      this.failures.set(uri.toString(), msg);
      this.log(msg);
      throw vscode.FileSystemError.Unavailable(msg);
    }
  }

  /** The text `content` as bytecode: the server converts it as a document
   * of its own (the bytecode file's `file:` URI, opened for the request and
   * closed after), so what is written is exactly what is being saved. */
  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const file = path.basename(uri.path);
    const c = await this.client();
    if (!c)
      throw new Error(saveFailure(file, 'the tosa-lsp server is not running'));
    const target = fileUri(uri);
    const shadow = target.toString();
    conversionUris.add(shadow);
    let bytes: Uint8Array;
    try {
      await c.sendNotification('textDocument/didOpen', {
        textDocument: { uri: shadow, languageId: 'mlir', version: 1, text: new TextDecoder().decode(content) },
      });
      try {
        bytes = bytecodeOfResult(await c.sendRequest('mlir/convertToBytecode', { uri: shadow }));
      } finally {
        await c.sendNotification('textDocument/didClose', { textDocument: { uri: shadow } });
      }
    } catch (e) {
      // VS Code says it ("Failed to save ...: <msg>", with Retry / Revert).
      const msg = saveFailure(file, e);
      this.log(msg);
      throw new Error(msg);
    } finally {
      // The server's last publish for it (empty, on close) comes after.
      setTimeout(() => conversionUris.delete(shadow), 10000);
    }
    await vscode.workspace.fs.writeFile(target, bytes);
    this.log(`${file}: saved as ${bytes.length} bytes of bytecode`);
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }
}

class BytecodeDocument implements vscode.CustomDocument {
  constructor(readonly uri: vscode.Uri) {}
  dispose(): void {}
}

/** Opening a `.mlirbc` file: its text instead, in the same column; if it
 * cannot be read, the reason in place of the editor. */
class BytecodeEditorProvider implements vscode.CustomReadonlyEditorProvider<BytecodeDocument> {
  constructor(private readonly fs: BytecodeFS) {}

  openCustomDocument(uri: vscode.Uri): BytecodeDocument {
    return new BytecodeDocument(uri);
  }

  async resolveCustomEditor(document: BytecodeDocument, panel: vscode.WebviewPanel): Promise<void> {
    const textUri = document.uri.with({ scheme: BYTECODE_SCHEME });
    let doc: vscode.TextDocument;
    try {
      doc = await vscode.workspace.openTextDocument(textUri);
    } catch (e) {
      const msg = this.fs.failures.get(textUri.toString()) ?? openFailure(path.basename(document.uri.path), e);
      panel.webview.html = failurePage(msg);
      void vscode.window.showErrorMessage(msg);
      return;
    }
    if (doc.languageId !== 'mlir')
      doc = await vscode.languages.setTextDocumentLanguage(doc, 'mlir');
    const column = panel.viewColumn ?? vscode.ViewColumn.Active;
    await vscode.window.showTextDocument(doc, { viewColumn: column, preview: false });
    panel.dispose();
  }
}

/** Registers the file system and the custom editor; `client()` is the
 * running client (waited for a little while it starts). */
export function registerBytecode(ctx: vscode.ExtensionContext, client: () => LanguageClient | undefined,
  log: (line: string) => void): void {
  const running = async (): Promise<LanguageClient | undefined> => {
    for (let i = 0; i < 100; i++) {
      const c = client();
      if (c && c.state === State.Running)
        return c;
      await new Promise(r => setTimeout(r, 100));
    }
    return undefined;
  };
  const fs = new BytecodeFS(running, log);
  ctx.subscriptions.push(
    vscode.workspace.registerFileSystemProvider(BYTECODE_SCHEME, fs, { isCaseSensitive: true }),
    vscode.window.registerCustomEditorProvider('tosaLsp.bytecode', new BytecodeEditorProvider(fs),
      { supportsMultipleEditorsPerDocument: true }),
  );
}
