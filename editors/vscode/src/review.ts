// Whole-file rewrites the user reviews before they apply ("Migrate this file
// to MLIR 22 TOSA", "Refine all shapes in @f"). The server marks such code
// actions with `data: {review: true}` and sends a versioned
// `documentChanges` edit; the extension shows a diff and applies the edit
// only on confirmation, and only to the version it was computed for.
// Pure (no `vscode` import): positions are LSP's (line, UTF-16 character),
// which are JavaScript string indices.

export interface Pos { line: number; character: number }
export interface Range { start: Pos; end: Pos }
export interface Edit { range: Range; newText: string }

/** A rewrite to review: edits of one document at one version. */
export interface Review {
  title: string;
  uri: string;
  /** The document version the edits were computed for (null: unknown). */
  version: number | null;
  edits: Edit[];
}

/** The kinds of the whole-file actions, as the palette commands ask for them. */
export const MIGRATE_KIND = 'source.migrate';
export const REFINE_KIND = 'source.refineShapes';

/** True for a code action's `data` marking an edit to review. */
export function isReviewData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as { review?: unknown }).review === true;
}

function isPos(p: unknown): p is Pos {
  return typeof p === 'object' && p !== null &&
    Number.isInteger((p as Pos).line) && Number.isInteger((p as Pos).character);
}

function isEdit(e: unknown): e is Edit {
  const r = (e as Edit | undefined)?.range;
  return typeof e === 'object' && e !== null && typeof (e as Edit).newText === 'string' &&
    typeof r === 'object' && r !== null && isPos(r.start) && isPos(r.end);
}

interface LspCodeAction {
  title?: unknown;
  kind?: unknown;
  data?: unknown;
  edit?: {
    documentChanges?: { textDocument?: { uri?: unknown; version?: unknown }; edits?: unknown[] }[];
    changes?: Record<string, unknown[]>;
  };
}

/**
 * The review of a raw LSP code action (as `textDocument/codeAction`
 * answers it): its one document's edits and version. Annotation ids are
 * dropped (the review is the confirmation). Undefined when the action has
 * no text edit of exactly one document.
 */
export function reviewOfAction(action: unknown): Review | undefined {
  const a = action as LspCodeAction;
  if (typeof a !== 'object' || a === null || typeof a.title !== 'string' || !a.edit)
    return undefined;
  const strip = (list: unknown[] | undefined) =>
    Array.isArray(list) && list.every(isEdit)
      ? (list as Edit[]).map(e => ({ range: e.range, newText: e.newText })) : undefined;
  const dc = a.edit.documentChanges;
  if (Array.isArray(dc)) {
    if (dc.length !== 1 || typeof dc[0]?.textDocument?.uri !== 'string')
      return undefined;
    const edits = strip(dc[0].edits);
    const v = dc[0].textDocument.version;
    return edits && { title: a.title, uri: dc[0].textDocument.uri as string,
                      version: Number.isInteger(v) ? v as number : null, edits };
  }
  const changes = a.edit.changes;
  if (changes && typeof changes === 'object') {
    const uris = Object.keys(changes);
    if (uris.length !== 1)
      return undefined;
    const edits = strip(changes[uris[0]]);
    return edits && { title: a.title, uri: uris[0], version: null, edits };
  }
  return undefined;
}

/** Does `kind` belong to `wanted` (equal, or a sub-kind `wanted.x`)? */
export function kindMatches(kind: unknown, wanted: string): boolean {
  return typeof kind === 'string' && (kind === wanted || kind.startsWith(wanted + '.'));
}

/** Offsets of the line starts of `text` (after \n; \r\n ends a line too). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++)
    if (text.charCodeAt(i) === 10)
      starts.push(i + 1);
  return starts;
}

/** The offset of an LSP position, clamped like VS Code clamps (end of line, end of text). */
function offsetOf(text: string, starts: number[], p: Pos): number {
  if (p.line < 0)
    return 0;
  if (p.line >= starts.length)
    return text.length;
  const start = starts[p.line];
  let end = p.line + 1 < starts.length ? starts[p.line + 1] - 1 : text.length;
  if (end > start && text.charCodeAt(end - 1) === 13)
    end--;
  return Math.min(start + Math.max(0, p.character), end);
}

/**
 * `text` with `edits` applied (LSP semantics: all ranges refer to the
 * original text; edits at the same position apply in the given order).
 * Throws on overlapping edits.
 */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  const starts = lineStarts(text);
  const spans = edits.map((e, i) => ({
    from: offsetOf(text, starts, e.range.start), to: offsetOf(text, starts, e.range.end), text: e.newText, i,
  }));
  for (const s of spans)
    if (s.to < s.from)
      throw new Error(`edit ${s.i} ends before it starts`);
  spans.sort((a, b) => a.from - b.from || a.to - b.to || a.i - b.i);
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (s.from < at)
      throw new Error(`edit ${s.i} overlaps the one before it`);
    out += text.slice(at, s.from) + s.text;
    at = s.to;
  }
  return out + text.slice(at);
}

/** Lines that differ between `a` and `b` (a common prefix/suffix is not counted). */
export function changedLines(a: string, b: string): { removed: number; added: number } {
  const x = a.split('\n');
  const y = b.split('\n');
  let p = 0;
  while (p < x.length && p < y.length && x[p] === y[p])
    p++;
  let s = 0;
  while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s])
    s++;
  return { removed: x.length - p - s, added: y.length - p - s };
}

/** The notification that goes with the diff. */
export function reviewPrompt(title: string, edits: number, lines: { removed: number; added: number }): string {
  const n = `${edits} edit${edits === 1 ? '' : 's'}`;
  return `${title}: ${n} (${lines.removed} line${lines.removed === 1 ? '' : 's'} → ${lines.added}). ` +
    'Review them in the diff, then Apply (or ✓ in its title bar).';
}

/** Why a review is not applied: the document moved on. */
export function staleMessage(file: string, title: string): string {
  return `${file} changed since "${title}" was computed: nothing applied. Run it again on the current text.`;
}

/** What the palette commands say when the server offers nothing. */
export function nothingMessage(kind: string, file: string, fn?: string): string {
  if (kind === MIGRATE_KIND)
    return `TOSA: nothing to migrate in ${file}: no op in it is in a pre-MLIR-22 TOSA form that MLIR 22 rejects.`;
  if (!fn)
    return 'TOSA: Refine All Shapes works on the function at the cursor: put the cursor inside a func.func.';
  return `TOSA: nothing to refine in @${fn}: shape inference makes no result type more static ` +
    '(or the function has errors; fix them first).';
}
