import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  applyEdits, changedLines, isReviewData, kindMatches, MIGRATE_KIND, nothingMessage, REFINE_KIND, reviewOfAction,
  reviewPrompt, staleMessage,
} from '../review';

const root = path.join(__dirname, '..', '..');
const at = (l1: number, c1: number, l2: number, c2: number, newText: string) =>
  ({ range: { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } }, newText });

test('review: applyEdits applies LSP edits against the original text, in any order', () => {
  const text = 'a = 1\nb = 2\nc = 3\n';
  assert.equal(applyEdits(text, [at(2, 4, 2, 5, '30'), at(0, 4, 0, 5, '10')]), 'a = 10\nb = 2\nc = 30\n');
  // Insertions at one position keep their order; a deletion of a whole line.
  assert.equal(applyEdits(text, [at(1, 0, 1, 0, 'x'), at(1, 0, 1, 0, 'y'), at(2, 0, 3, 0, '')]), 'a = 1\nxyb = 2\n');
  // Positions past the end of a line or of the text clamp (as VS Code does); \r\n lines.
  assert.equal(applyEdits('ab\r\ncd', [at(0, 99, 0, 99, '!'), at(9, 0, 9, 0, '?')]), 'ab!\r\ncd?');
  // UTF-16 characters (LSP's default position encoding).
  assert.equal(applyEdits('// é😀x\n', [at(0, 6, 0, 7, 'y')]), '// é😀y\n');
  assert.equal(applyEdits(text, []), text);
});

test('review: overlapping or reversed edits are refused', () => {
  assert.throws(() => applyEdits('abcdef', [at(0, 0, 0, 3, 'x'), at(0, 2, 0, 4, 'y')]), /overlaps/);
  assert.throws(() => applyEdits('abcdef', [at(0, 3, 0, 1, 'x')]), /ends before/);
});

test('review: data.review marks an action to review', () => {
  assert.equal(isReviewData({ review: true }), true);
  for (const d of [undefined, null, {}, { review: 'yes' }, { review: false }, true])
    assert.equal(isReviewData(d), false, JSON.stringify(d));
});

test('review: reviewOfAction reads the versioned documentChanges edit (and plain changes)', () => {
  const action = {
    title: 'Migrate this file to MLIR 22 TOSA (2 ops)', kind: 'source.migrate', data: { review: true },
    edit: { documentChanges: [{ textDocument: { uri: 'file:///w/m.mlir', version: 7 },
                                edits: [{ ...at(1, 2, 1, 3, 'x'), annotationId: 'tosa.review' }] }] },
  };
  assert.deepEqual(reviewOfAction(action), {
    title: 'Migrate this file to MLIR 22 TOSA (2 ops)', uri: 'file:///w/m.mlir', version: 7, edits: [at(1, 2, 1, 3, 'x')],
  });
  assert.deepEqual(reviewOfAction({ title: 't', edit: { changes: { 'file:///a.mlir': [at(0, 0, 0, 0, 'y')] } } }),
    { title: 't', uri: 'file:///a.mlir', version: null, edits: [at(0, 0, 0, 0, 'y')] });
  // No edit, two documents, malformed edits, a command only.
  assert.equal(reviewOfAction({ title: 't', command: { command: 'x' } }), undefined);
  assert.equal(reviewOfAction({ title: 't', edit: { changes: { a: [], b: [] } } }), undefined);
  assert.equal(reviewOfAction({ title: 't', edit: { documentChanges: [{ textDocument: { uri: 'a' }, edits: [{ newText: 1 }] }] } }), undefined);
  assert.equal(reviewOfAction(null), undefined);
});

test('review: kinds match themselves and their sub-kinds only', () => {
  assert.ok(kindMatches('source.migrate', MIGRATE_KIND));
  assert.ok(kindMatches('source.refineShapes.x', REFINE_KIND));
  assert.ok(!kindMatches('source', MIGRATE_KIND));
  assert.ok(!kindMatches('source.migrateAll', MIGRATE_KIND));
  assert.ok(!kindMatches(undefined, MIGRATE_KIND));
});

test('review: messages name the action, the counts and what to do', () => {
  assert.deepEqual(changedLines('a\nb\nc\n', 'a\nB\nC\nc\n'), { removed: 1, added: 2 });
  assert.deepEqual(changedLines('same', 'same'), { removed: 0, added: 0 });
  assert.equal(reviewPrompt('Refine all shapes in @f', 1, { removed: 2, added: 3 }),
    'Refine all shapes in @f: 1 edit (2 lines → 3). Review them in the diff, then Apply (or ✓ in its title bar).');
  assert.match(staleMessage('m.mlir', 'Migrate'), /m\.mlir changed since "Migrate" was computed: nothing applied/);
  assert.match(nothingMessage(MIGRATE_KIND, 'm.mlir'), /nothing to migrate in m\.mlir/);
  assert.match(nothingMessage(REFINE_KIND, 'm.mlir', 'f'), /nothing to refine in @f/);
  assert.match(nothingMessage(REFINE_KIND, 'm.mlir'), /put the cursor inside a func\.func/);
});

test('review: package.json contributes the commands, menus and the review buttons', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const titles = Object.fromEntries(pkg.contributes.commands.map((c: { command: string; title: string }) => [c.command, c.title]));
  assert.equal(titles['tosaLsp.migrateFile'], 'Migrate File to MLIR 22 TOSA');
  assert.equal(titles['tosaLsp.refineShapes'], 'Refine All Shapes in Function');
  const menus = pkg.contributes.menus;
  const when = (menu: string, cmd: string) => menus[menu].find((m: { command: string }) => m.command === cmd)?.when;
  assert.match(when('editor/context', 'tosaLsp.migrateFile'), /editorLangId == mlir/);
  assert.match(when('editor/context', 'tosaLsp.refineShapes'), /editorLangId == mlir/);
  assert.equal(when('editor/title', 'tosaLsp.applyReview'), 'resourceScheme == tosa-review');
  assert.equal(when('commandPalette', 'tosaLsp.review'), 'false');
});
