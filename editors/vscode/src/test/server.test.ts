// The extension's requests against the real server, over stdio, with the
// same payloads extension.ts sends (initializationOptions and
// didChangeConfiguration from settings.ts, tosa/previewLowering with a
// function name, tosa.compile with a workDoneToken and cancellation).
// Skipped when no tosa-lsp is found (TOSA_LSP, else discovery on PATH).
import { strict as assert } from 'node:assert';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';
import { findServer, nodeEnv } from '../discovery';
import { mappingAt, PreviewMapping } from '../previewUri';
import { applyEdits, isReviewData, kindMatches, MIGRATE_KIND, REFINE_KIND, reviewOfAction } from '../review';
import { didChangeConfigurationParams, objectGetter, toServerSettings } from '../settings';

const found = process.env.TOSA_LSP
  ? { ok: fs.existsSync(process.env.TOSA_LSP), path: process.env.TOSA_LSP }
  : findServer('', nodeEnv('/nonexistent'));
const skip = !found.ok ? 'no tosa-lsp (set TOSA_LSP or put it on PATH)' : false;

const source = [
  'func.func @dyn(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {',
  '  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>',
  '  return %0 : tensor<?x3xf32>',
  '}',
  '',
].join('\n');

let child: cp.ChildProcess;
let conn: rpc.MessageConnection;
let tmp: string;
let uri: string;
const progress: unknown[] = [];

before(async () => {
  if (skip)
    return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tosa-vscode-test-'));
  const file = path.join(tmp, 'dyn.mlir');
  fs.writeFileSync(file, source);
  uri = pathToFileURL(file).toString();
  child = cp.spawn(found.ok ? (found as { path: string }).path : '', [], { stdio: ['pipe', 'pipe', 'inherit'], cwd: tmp });
  conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout!), new rpc.StreamMessageWriter(child.stdin!));
  conn.onNotification('$/progress', (p: unknown) => { progress.push(p); });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('window/showDocument', () => ({ success: true }));
  // The first analysis of a document: requests by position need it.
  let analysed!: () => void;
  const firstDiagnostics = new Promise<void>(resolve => { analysed = resolve; });
  conn.onNotification('textDocument/publishDiagnostics', () => analysed());
  conn.listen();
  const settings = toServerSettings(objectGetter({ 'compile.outputDir': tmp, 'compile.timeoutSeconds': 120 }));
  const init = await conn.sendRequest('initialize', {
    processId: process.pid, rootUri: pathToFileURL(tmp).toString(), capabilities: { window: { workDoneProgress: true } },
    initializationOptions: settings,
  }) as { capabilities: Record<string, unknown> };
  assert.ok(init.capabilities);
  await conn.sendNotification('initialized', {});
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'mlir', version: 1, text: source } });
  await firstDiagnostics;
});

after(async () => {
  if (skip)
    return;
  await conn.sendRequest('shutdown').catch(() => undefined);
  await conn.sendNotification('exit').catch(() => undefined);
  await new Promise(resolve => setTimeout(resolve, 100));
  conn.dispose();
  child.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('server: tosa/previewLowering answers text, pipeline and usable mappings', { skip }, async () => {
  for (const [stage, mode] of [['linalg', 'upstream'], ['loops', 'safe'], ['llvm', 'versioned']]) {
    const r = await conn.sendRequest('tosa/previewLowering', { uri, function: 'dyn', stage, mode }) as
      { text: string; pipeline: string; mappings: PreviewMapping[] };
    assert.equal(typeof r.text, 'string');
    assert.ok(r.pipeline.length > 0, 'pipeline');
    const lines = r.text.split('\n');
    const add = r.mappings.find(m => m.sourceOp === 'tosa.add');
    assert.ok(add, `${stage}/${mode}: a mapping for tosa.add in ${JSON.stringify(r.mappings)}`);
    assert.deepEqual(add.sourcePosition, { line: 1, character: 7 });
    assert.ok(add.previewPosition.line < lines.length);
    assert.equal(mappingAt(r.mappings, add.previewPosition.line)?.sourceOp, 'tosa.add');
    if (mode === 'safe' && stage !== 'llvm')
      assert.match(r.text, /cf\.assert/);
  }
});

test('server: previewLowering by position, and errors come back as errors', { skip }, async () => {
  const r = await conn.sendRequest('tosa/previewLowering',
    { uri, position: { line: 1, character: 10 }, stage: 'linalg', mode: 'upstream' }) as { text: string };
  assert.match(r.text, /linalg/);
  await assert.rejects(conn.sendRequest('tosa/previewLowering', { uri, function: 'dyn', stage: 'asm', mode: 'upstream' }),
    /unknown stage/);
});

test('server: didChangeConfiguration with the extension payload is accepted', { skip }, async () => {
  await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(
    toServerSettings(objectGetter({ 'hints.inferredShapes': false, 'info.runtimeChecks': false, extraBroadcastableOps: ['tfl.add'] }))));
  const hints = await conn.sendRequest('textDocument/inlayHint',
    { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 4, character: 0 } } });
  assert.ok(Array.isArray(hints) || hints === null);
});

test('server: tosa.compile with a workDoneToken reports progress and writes the library', { skip, timeout: 180000 }, async () => {
  progress.length = 0;
  const r = await conn.sendRequest('workspace/executeCommand', {
    command: 'tosa.compile', arguments: [{ uri, function: 'dyn', emit: 'obj' }], workDoneToken: 'vscode-test-1',
  }) as { output: string; bytes: number };
  assert.ok(fs.existsSync(r.output), r.output);
  assert.ok(r.bytes > 0);
  const mine = progress.filter(p => (p as { token: string }).token === 'vscode-test-1')
    .map(p => (p as { value: { kind: string } }).value.kind);
  assert.equal(mine[0], 'begin');
  assert.equal(mine[mine.length - 1], 'end');
});

test('server: cancelling tosa.compile rejects the request', { skip, timeout: 180000 }, async () => {
  const source = new rpc.CancellationTokenSource();
  const p = conn.sendRequest('workspace/executeCommand', {
    command: 'tosa.compile', arguments: [{ uri, function: 'dyn', emit: 'shared' }], workDoneToken: 'vscode-test-2',
  }, source.token);
  setTimeout(() => source.cancel(), 50);
  await assert.rejects(p, (e: { code?: number; message?: string }) =>
    e.code === -32800 || /cancel/i.test(String(e.message)));
});

// Whole-file rewrites: the extension reviews actions with data.review and
// applies their versioned edit (review.ts) on confirmation.
const oldForm = [
  'func.func @relu6(%x: tensor<4xf32>) -> tensor<4xf32> {',
  '  %0 = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>',
  '  return %0 : tensor<4xf32>',
  '}',
  '',
].join('\n');
const refinable = [
  'func.func @t(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {',
  '  %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>',
  '  return %t : tensor<?x?xf32>',
  '}',
  '',
].join('\n');

async function openDoc(name: string, text: string, version: number): Promise<string> {
  const u = pathToFileURL(path.join(tmp, name)).toString();
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri: u, languageId: 'mlir', version, text } });
  return u;
}

async function actions(u: string, line: number, character: number, only?: string[]): Promise<Record<string, unknown>[]> {
  const r = await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri: u }, range: { start: { line, character }, end: { line, character } },
    context: { diagnostics: [], ...(only ? { only } : {}) },
  }) as Record<string, unknown>[] | null;
  return r ?? [];
}

test('server: migrate is a source.migrate action to review, with a versioned edit that migrates the file', { skip }, async () => {
  const u = await openDoc('old.mlir', oldForm, 5);
  const found = (await actions(u, 0, 0, [MIGRATE_KIND])).filter(a => kindMatches(a.kind, MIGRATE_KIND));
  assert.equal(found.length, 1, JSON.stringify(found));
  assert.match(String(found[0].title), /^Migrate this file to MLIR 22 TOSA \(1 ops?\)$/);
  assert.ok(isReviewData(found[0].data), `data.review: ${JSON.stringify(found[0].data)}`);
  assert.equal(found[0].command, undefined);
  const r = reviewOfAction(found[0]);
  assert.ok(r);
  assert.equal(r.uri, u);
  assert.equal(r.version, 5);
  const migrated = applyEdits(oldForm, r.edits);
  assert.doesNotMatch(migrated, /min_fp/);
  assert.match(migrated, /min_val = 0\.0+e\+00 : f32/);
  // No change annotation asks VS Code for its own confirmation (it would
  // open the Refactor Preview with every change unticked).
  assert.doesNotMatch(JSON.stringify(found[0].edit), /needsConfirmation/);
  // Also a quickfix on the old op's diagnostic (the lightbulb), to review too.
  const quick = (await actions(u, 1, 9, ['quickfix'])).filter(a => /^Migrate this file/.test(String(a.title)));
  assert.equal(quick.length, 1, JSON.stringify(quick.map(a => a.title)));
  assert.equal(quick[0].kind, 'quickfix');
  assert.ok(isReviewData(quick[0].data));
});

test('server: refine all is a source.refineShapes action to review; nothing where nothing refines', { skip }, async () => {
  const u = await openDoc('refine.mlir', refinable, 3);
  const found = (await actions(u, 1, 4, [REFINE_KIND])).filter(a => kindMatches(a.kind, REFINE_KIND));
  assert.equal(found.length, 1, JSON.stringify(found));
  assert.match(String(found[0].title), /^Refine all shapes in @t/);
  assert.ok(isReviewData(found[0].data));
  const r = reviewOfAction(found[0]);
  assert.ok(r);
  assert.equal(r.version, 3);
  assert.match(applyEdits(refinable, r.edits), /-> tensor<3x2xf32>/);
  // The migrate action is not offered on a file in the current form.
  assert.deepEqual((await actions(u, 1, 4, [MIGRATE_KIND])).filter(a => kindMatches(a.kind, MIGRATE_KIND)), []);
  // Outside a function: no refine action.
  assert.deepEqual((await actions(u, 4, 0, [REFINE_KIND])).filter(a => kindMatches(a.kind, REFINE_KIND)), []);
});
