import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  decodePreviewQuery, decodePreviewUri, encodePreviewUri, mappingAt, PREVIEW_SCHEME, PreviewMapping,
  previewLinesFor,
} from '../previewUri';

test('round trip', () => {
  const t = { source: 'file:///work/a%20b/model.mlir', stage: 'loops' as const, mode: 'safe' as const, function: 'main' };
  const u = encodePreviewUri(t);
  assert.ok(u.startsWith(PREVIEW_SCHEME + ':/'));
  assert.match(u, /model\.mlir%20%40main%20\(loops%2C%20safe\)\.mlir\?/);
  assert.deepEqual(decodePreviewUri(u), t);
});

test('awkward source URIs survive (query is base64url, no % decoding issues)', () => {
  for (const source of ['file:///x/we%23ird%3F%26name.mlir', 'untitled:Untitled-1', 'file:///c%3A/Users/u/m.mlir',
                        'file:///tmp/ü/ß.mlir']) {
    const t = { source, stage: 'llvm' as const, mode: 'versioned' as const };
    const u = encodePreviewUri(t);
    assert.ok(!/[#\s]/.test(u), u);
    const query = u.slice(u.indexOf('?') + 1);
    assert.match(query, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodePreviewQuery(query), t);
    assert.deepEqual(decodePreviewUri(u), t);
  }
});

test('no function: whole file', () => {
  const u = encodePreviewUri({ source: 'file:///m.mlir', stage: 'linalg', mode: 'upstream' });
  assert.deepEqual(decodePreviewUri(u), { source: 'file:///m.mlir', stage: 'linalg', mode: 'upstream' });
});

test('invalid input is rejected', () => {
  assert.equal(decodePreviewUri('file:///m.mlir'), undefined);
  assert.equal(decodePreviewUri('tosa-preview:/x.mlir'), undefined);
  assert.equal(decodePreviewQuery('%%%'), undefined);
  assert.equal(decodePreviewQuery(Buffer.from('{"s":"f","st":"asm","m":"safe"}').toString('base64url')), undefined);
  assert.equal(decodePreviewQuery(Buffer.from('{"st":"llvm","m":"safe"}').toString('base64url')), undefined);
  assert.equal(decodePreviewQuery(Buffer.from('[1]').toString('base64url')), undefined);
});

const maps: PreviewMapping[] = [
  { previewPosition: { line: 3, character: 4 }, sourcePosition: { line: 1, character: 7 }, sourceOp: 'tosa.add' },
  { previewPosition: { line: 5, character: 4 }, sourcePosition: { line: 2, character: 7 }, sourceOp: 'tosa.mul' },
  { previewPosition: { line: 5, character: 30 }, sourcePosition: { line: 3, character: 7 }, sourceOp: 'tosa.sub' },
];

test('mappingAt', () => {
  assert.equal(mappingAt(maps, 3)?.sourceOp, 'tosa.add');
  assert.equal(mappingAt(maps, 4), undefined);
  assert.equal(mappingAt(maps, 5, 0)?.sourceOp, 'tosa.mul');
  assert.equal(mappingAt(maps, 5, 10)?.sourceOp, 'tosa.mul');
  assert.equal(mappingAt(maps, 5, 31)?.sourceOp, 'tosa.sub');
  assert.equal(mappingAt(maps, 5)?.sourceOp, 'tosa.sub');
  assert.deepEqual(previewLinesFor(maps, 2), [5]);
});
