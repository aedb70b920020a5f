import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { configChangeAction } from '../settings';
import {
  compileFailureReason, compileScopes, hasSections, missingLibraryHint, openSettingCommand, parseLogLine, pickEntries,
  progressStep, statusItem,
} from '../ui';

const root = path.join(__dirname, '..', '..');

test('compile failure: the notification names the first error, not "compilation failed"', () => {
  assert.equal(compileFailureReason(
    "compilation failed\nc.mlir:2:8: error: 'tosa.add' op operands don't have broadcast-compatible shapes\n  %0 = ...\n"),
    "c.mlir:2:8: error: 'tosa.add' op operands don't have broadcast-compatible shapes");
  assert.equal(compileFailureReason('compilation failed\n  timed out after 120 s  \n'), 'timed out after 120 s');
  assert.equal(compileFailureReason('no function named @f'), 'no function named @f');
  assert.equal(compileFailureReason('compilation failed'), 'compilation failed');
  assert.ok(compileFailureReason('compilation failed\nerror: ' + 'x'.repeat(500)).length <= 160);
});

test('progress: the pass pipeline is cut to the step name', () => {
  const pipeline = 'lowering: builtin.module(' + 'func.func(tosa-to-linalg-named,tosa-to-linalg),'.repeat(12) + ')';
  assert.ok(pipeline.length > 500);
  assert.equal(progressStep(pipeline), 'lowering');
  assert.equal(progressStep('translating to LLVM IR'), 'translating to LLVM IR');
  assert.equal(progressStep('optimizing: -O2 for x86_64'), 'optimizing: -O2 for x86_64');
  assert.equal(progressStep('linking: /usr/bin/cc -shared ' + '-o /tmp/x '.repeat(20)), 'linking');
  assert.ok(progressStep('y'.repeat(300)).length <= 60);
});

test('compile scopes: no "All public functions" in a file with // ----- sections', () => {
  assert.ok(hasSections('func.func @a() {\n}\n// -----\nfunc.func @b() {\n}\n'));
  assert.ok(!hasSections('func.func @a() {\n  // ----- not a marker\n}\n'));
  assert.deepEqual(compileScopes('b', 'm.mlir', true).map(i => i.label), ['@b']);
  assert.deepEqual(compileScopes(undefined, 'm.mlir', true), []);
  assert.deepEqual(compileScopes('a', 'm.mlir', false).map(i => [i.label, i.fn]),
    [['@a', 'a'], ['All public functions', undefined]]);
});

test('pickers focus the current choice', () => {
  const { entries, active } = pickEntries(['linalg', 'loops', 'llvm'], 'loops', { loops: 'bufferized' });
  assert.deepEqual(entries.map(e => e.label), ['linalg', 'loops', 'llvm']);
  assert.equal(active, entries[1]);
  assert.equal(active?.description, '(current)');
  assert.equal(active?.detail, 'bufferized');
});

test('server stderr: log levels from the E[/I[/D[ prefixes', () => {
  assert.deepEqual(parseLogLine('I[12:01:02.345] --> textDocument/hover'), { level: 'info', text: '--> textDocument/hover' });
  assert.deepEqual(parseLogLine('D[12:01:02.345] analysed'), { level: 'info', text: 'analysed' });
  assert.deepEqual(parseLogLine('E[12:01:02.345] bad Content-Length header: x'),
    { level: 'error', text: 'bad Content-Length header: x' });
  assert.deepEqual(parseLogLine('  continued', 'error'), { level: 'error', text: '  continued' });
  assert.deepEqual(parseLogLine('plain text'), { level: 'info', text: 'plain text' });
});

test('status bar: starting, ready, error', () => {
  assert.match(statusItem('starting').tooltip, /starting/);
  assert.match(statusItem('running', '/usr/bin/tosa-lsp').tooltip, /ready \(\/usr\/bin\/tosa-lsp\)/);
  assert.equal(statusItem('running').error, false);
  const e = statusItem('error', 'cannot find the server');
  assert.equal(e.error, true);
  assert.match(e.tooltip, /cannot find the server/);
  assert.match(e.text, /\$\(error\)/);
});

test('Open Setting: Remote settings in a remote window, else User settings, filtered', () => {
  assert.deepEqual(openSettingCommand('ssh-remote', 'tosaLsp.serverPath'),
    { command: 'workbench.action.openRemoteSettings', args: { query: 'tosaLsp.serverPath' } });
  assert.deepEqual(openSettingCommand(undefined, 'tosaLsp.serverPath'),
    { command: 'workbench.action.openGlobalSettings', args: { query: 'tosaLsp.serverPath' } });
});

test('serverPath and serverArgs changes restart the server; others are sent to it', () => {
  const affects = (changed: string[]) => (s: string) => changed.some(c => c === s || c.startsWith(s + '.'));
  assert.equal(configChangeAction(affects(['tosaLsp.serverPath'])), 'restart');
  assert.equal(configChangeAction(affects(['tosaLsp.serverArgs'])), 'restart');
  assert.equal(configChangeAction(affects(['tosaLsp.hints.inferredShapes'])), 'notify');
  assert.equal(configChangeAction(affects(['editor.fontSize'])), 'none');
});

test('language configuration: `->` is not a bracket', () => {
  const conf = JSON.parse(fs.readFileSync(path.join(root, 'language-configuration.json'), 'utf8'));
  const pairs: string[][] = [...conf.brackets, ...(conf.colorizedBracketPairs ?? []),
    ...conf.autoClosingPairs.map((p: { open: string; close: string }) => [p.open, p.close])];
  for (const [open, close] of pairs)
    assert.ok(!'->'.includes(open) && !'->'.includes(close), `${open}${close} would make "->" a bracket`);
  assert.deepEqual(conf.brackets, [['{', '}'], ['[', ']'], ['(', ')']]);
});

test('a server the loader cannot start: the message names the Debian package', () => {
  const err = (lib: string) => `/usr/bin/tosa-lsp: error while loading shared libraries: ${lib}: cannot open shared object file: No such file or directory`;
  assert.equal(missingLibraryHint(err('libMLIR.so.22.1')),
    "tosa-lsp cannot start: libMLIR.so.22.1 is missing (install Debian's libmlir-22: sudo apt-get install libmlir-22)");
  assert.match(missingLibraryHint(err('libmlir_c_runner_utils.so.22.1'))!, /libmlir-22/);
  assert.match(missingLibraryHint(err('libLLVM.so.22.1'))!, /install Debian's libllvm22/);
  assert.match(missingLibraryHint(err('libLLVM-22.so'))!, /libllvm22/);
  assert.match(missingLibraryHint(err('libmimalloc.so.2'))!, /libmimalloc2\.0/);
  assert.match(missingLibraryHint(err('libfoo.so.1'))!, /libfoo\.so\.1 is missing \(find its package: apt-file search libfoo\.so\.1\)/);
  assert.match(missingLibraryHint("tosa-lsp: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found")!,
    /newer libstdc\+\+6/);
  assert.equal(missingLibraryHint('E[12:00:00.000] some other failure'), undefined);
});
