// `.mlirbc` files as text, the pure parts (no `vscode`): a bytecode file
// opens as a `tosa-mlirbc:` document whose text comes from the server's
// `mlir/convertFromBytecode` and is saved through `mlir/convertToBytecode`
// (wired in bytecodeProvider.ts; tested in test/bytecode.test.ts).

/** The scheme of the text view of a `.mlirbc` file (same path). */
export const BYTECODE_SCHEME = 'tosa-mlirbc';

/** MLIR bytecode's magic number: 'M' 'L' 0xEF 'R'. */
export function isBytecode(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x4d && bytes[1] === 0x4c && bytes[2] === 0xef && bytes[3] === 0x52;
}

/** `mlir/convertToBytecode`'s answer as bytes; throws when it is not bytecode
 * (nothing is written then). */
export function bytecodeOfResult(r: unknown): Uint8Array {
  const out = (r as { output?: unknown } | null)?.output;
  if (typeof out !== 'string' || out === '')
    throw new Error('the server answered mlir/convertToBytecode without bytecode');
  const bytes = Buffer.from(out, 'base64');
  if (!isBytecode(bytes))
    throw new Error('the server answered mlir/convertToBytecode with something that is not MLIR bytecode');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `mlir/convertFromBytecode`'s answer as text; throws when there is none. */
export function textOfResult(r: unknown): string {
  const out = (r as { output?: unknown } | null)?.output;
  if (typeof out !== 'string')
    throw new Error('the server answered mlir/convertFromBytecode without text');
  return out;
}

/** A request's failure as one sentence (the server's message, else the error). */
export function errorText(e: unknown): string {
  const raw = e instanceof Error ? e.message : typeof e === 'object' && e && 'message' in e
    ? String((e as { message: unknown }).message) : String(e);
  if (/Unhandled method|method not found/i.test(raw))
    return 'this tosa-lsp does not convert bytecode: update the server (tosaLsp.serverPath)';
  return raw.trim() || 'the conversion failed';
}

/** What the user reads when a `.mlirbc` file cannot be shown as text. */
export function openFailure(file: string, e: unknown): string {
  return `Cannot open ${file} as MLIR text: ${errorText(e)}. The file was not changed.`;
}

/** What the user reads when the text cannot be saved as bytecode. */
export function saveFailure(file: string, e: unknown): string {
  return `${file} not saved (it keeps its bytecode): ${errorText(e)}`;
}

/** The webview page shown in place of the text when it cannot be read. */
export function failurePage(message: string): string {
  const esc = message.replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">` +
    `</head><body><p class="tosa-bytecode-error" style="color:var(--vscode-errorForeground);font-size:13px;white-space:pre-wrap">${esc}</p></body></html>`;
}
