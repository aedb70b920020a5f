// The `tosa-preview:` scheme of the read-only lowering previews, and the
// preview -> source mapping lookups. Pure (no `vscode` import).
//
//   tosa-preview:/<source basename> (<stage>, <mode>).mlir?<base64url JSON>
//
// The path only makes the tab title readable and the language `mlir`; the
// query carries everything (source URI, stage, mode, function) as base64url
// JSON, so no percent-(de)coding done by vscode.Uri can corrupt the source
// URI (which may itself contain `%`, `?`, `&` or `#`).
import { Mode, MODES, Stage, STAGES } from './settings';

export const PREVIEW_SCHEME = 'tosa-preview';

export interface PreviewTarget {
  /** The source document's URI, as a string (`file:///…`). */
  source: string;
  stage: Stage;
  mode: Mode;
  /** Function to lower (without `@`); undefined: the whole file. */
  function?: string;
}

function basename(uri: string): string {
  const noQuery = uri.replace(/[?#].*$/, '');
  const last = noQuery.slice(noQuery.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(last) || 'untitled';
  } catch {
    return last || 'untitled';
  }
}

/** Characters that are fine in a URI path segment as is. */
function safeSegment(s: string): string {
  return s.replace(/[^A-Za-z0-9._@ ()+,-]/g, '_');
}

export function encodePreviewUri(t: PreviewTarget): string {
  const payload: Record<string, string> = { s: t.source, st: t.stage, m: t.mode };
  if (t.function)
    payload.f = t.function;
  const q = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const fn = t.function ? `@${t.function} ` : '';
  const title = safeSegment(`${basename(t.source)} ${fn}(${t.stage}, ${t.mode})`);
  return `${PREVIEW_SCHEME}:/${encodeURIComponent(title)}.mlir?${q}`;
}

/** Decodes the query part (what vscode.Uri.query gives back). */
export function decodePreviewQuery(query: string): PreviewTarget | undefined {
  let o: unknown;
  try {
    o = JSON.parse(Buffer.from(query, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof o !== 'object' || o === null)
    return undefined;
  const r = o as Record<string, unknown>;
  if (typeof r.s !== 'string' || r.s === '')
    return undefined;
  if (!(STAGES as readonly unknown[]).includes(r.st) || !(MODES as readonly unknown[]).includes(r.m))
    return undefined;
  const t: PreviewTarget = { source: r.s, stage: r.st as Stage, mode: r.m as Mode };
  if (typeof r.f === 'string' && r.f !== '')
    t.function = r.f;
  return t;
}

/** Decodes a whole `tosa-preview:` URI string. */
export function decodePreviewUri(uri: string): PreviewTarget | undefined {
  if (!uri.startsWith(PREVIEW_SCHEME + ':'))
    return undefined;
  const q = uri.indexOf('?');
  if (q < 0)
    return undefined;
  const hash = uri.indexOf('#', q);
  return decodePreviewQuery(uri.slice(q + 1, hash < 0 ? undefined : hash));
}

export interface LspPosition { line: number; character: number }
export interface PreviewMapping {
  previewPosition: LspPosition;
  sourcePosition: LspPosition;
  sourceOp: string;
}

/**
 * The mapping of a preview line: the one that starts on `line` (the server
 * maps the first line lowered from each op); with several, the last one
 * whose column is at or before `character`, else the first.
 */
export function mappingAt(mappings: readonly PreviewMapping[], line: number,
                          character = Number.MAX_SAFE_INTEGER): PreviewMapping | undefined {
  const onLine = mappings.filter(m => m.previewPosition.line === line);
  if (onLine.length === 0)
    return undefined;
  const before = onLine.filter(m => m.previewPosition.character <= character);
  return before.length > 0 ? before[before.length - 1] : onLine[0];
}

/** Preview lines whose mapping points at the given source line. */
export function previewLinesFor(mappings: readonly PreviewMapping[], sourceLine: number): number[] {
  return mappings.filter(m => m.sourcePosition.line === sourceLine).map(m => m.previewPosition.line);
}
