import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { DiscoveryEnv, expandVariables, findServer, versionedNames } from '../discovery';

function env(files: string[], over: Partial<DiscoveryEnv> = {}): DiscoveryEnv {
  const set = new Set(files);
  return {
    workspaceFolder: '/ws',
    userHome: '/home/u',
    pathEnv: '/usr/local/bin:/usr/bin',
    extensionPath: '/ext',
    platform: 'linux',
    isExecutable: p => set.has(p),
    listDir: dir => files.filter(f => f.startsWith(dir + '/')).map(f => f.slice(dir.length + 1)),
    ...over,
  };
}

test('expandVariables: ${workspaceFolder}, ${userHome}, ~, ${env:X}', () => {
  const e = { workspaceFolder: '/ws', userHome: '/home/u' };
  assert.equal(expandVariables('${workspaceFolder}/build/bin/tosa-lsp', e), '/ws/build/bin/tosa-lsp');
  assert.equal(expandVariables('${userHome}/bin/tosa-lsp', e), '/home/u/bin/tosa-lsp');
  assert.equal(expandVariables('~/bin/tosa-lsp', e), '/home/u/bin/tosa-lsp');
  assert.equal(expandVariables('~', e), '/home/u');
  assert.equal(expandVariables('/a/~/b', e), '/a/~/b');
  assert.equal(expandVariables('  ~/x  ', e), '/home/u/x');
  assert.equal(expandVariables('${env:ROOT}/x', e, { ROOT: '/r' }), '/r/x');
  assert.equal(expandVariables('${workspaceFolder}/x', { userHome: '/h' }), '${workspaceFolder}/x');
});

test('setting wins and is expanded', () => {
  const r = findServer('${workspaceFolder}/build/bin/tosa-lsp',
    env(['/ws/build/bin/tosa-lsp', '/usr/bin/tosa-lsp']));
  assert.deepEqual(r, { ok: true, path: '/ws/build/bin/tosa-lsp', source: 'setting' });
  assert.deepEqual(findServer('~/bin/tosa-lsp', env(['/home/u/bin/tosa-lsp'])),
    { ok: true, path: '/home/u/bin/tosa-lsp', source: 'setting' });
});

test('relative setting is taken from the workspace folder', () => {
  const r = findServer('build/bin/tosa-lsp', env(['/ws/build/bin/tosa-lsp']));
  assert.deepEqual(r, { ok: true, path: '/ws/build/bin/tosa-lsp', source: 'setting' });
});

test('bare name setting without a workspace is looked up on PATH', () => {
  const r = findServer('tosa-lsp-dev', env(['/usr/bin/tosa-lsp-dev'], { workspaceFolder: undefined }));
  assert.deepEqual(r, { ok: true, path: '/usr/bin/tosa-lsp-dev', source: 'setting' });
});

test('a wrong setting is an error, no silent fall-back', () => {
  const r = findServer('/nope/tosa-lsp', env(['/usr/bin/tosa-lsp']));
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.match(r.message, /tosaLsp\.serverPath/);
    assert.deepEqual(r.tried, ['/nope/tosa-lsp']);
  }
});

test('empty setting: PATH in order', () => {
  assert.deepEqual(findServer('', env(['/usr/bin/tosa-lsp', '/usr/local/bin/tosa-lsp'])),
    { ok: true, path: '/usr/local/bin/tosa-lsp', source: 'path' });
  assert.deepEqual(findServer(undefined, env(['/usr/bin/tosa-lsp'])),
    { ok: true, path: '/usr/bin/tosa-lsp', source: 'path' });
  assert.deepEqual(findServer('   ', env(['/usr/bin/tosa-lsp'])),
    { ok: true, path: '/usr/bin/tosa-lsp', source: 'path' });
});

test('plain name before versioned names; newest version first', () => {
  assert.deepEqual(findServer('', env(['/usr/bin/tosa-lsp-21', '/usr/bin/tosa-lsp-22', '/usr/bin/tosa-lsp-foo'])),
    { ok: true, path: '/usr/bin/tosa-lsp-22', source: 'path' });
  assert.deepEqual(findServer('', env(['/usr/bin/tosa-lsp-22', '/usr/local/bin/tosa-lsp'])),
    { ok: true, path: '/usr/local/bin/tosa-lsp', source: 'path' });
  assert.deepEqual(versionedNames(['tosa-lsp-9', 'tosa-lsp-10', 'tosa-lsp-10.1', 'tosa-lsp-x', 'tosa-lsp'], 'linux'),
    ['tosa-lsp-10.1', 'tosa-lsp-10', 'tosa-lsp-9']);
});

test('bundled server last', () => {
  assert.deepEqual(findServer('', env(['/ext/server/tosa-lsp'])),
    { ok: true, path: '/ext/server/tosa-lsp', source: 'bundled' });
});

test('nothing found: clear message and the list of tried paths', () => {
  const r = findServer('', env([]));
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.match(r.message, /Cannot find the tosa-lsp server/);
    assert.deepEqual(r.tried, ['/usr/local/bin/tosa-lsp', '/usr/bin/tosa-lsp', '/ext/server/tosa-lsp']);
  }
});

test('windows: .exe and ; separated PATH', () => {
  const r = findServer('', env(['C:\\tools\\tosa-lsp.exe'], {
    platform: 'win32', pathEnv: 'C:\\Windows;C:\\tools', extensionPath: 'C:\\ext',
    workspaceFolder: 'C:\\ws', userHome: 'C:\\Users\\u',
  }));
  assert.deepEqual(r, { ok: true, path: 'C:\\tools\\tosa-lsp.exe', source: 'path' });
});
