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
  assert.deepEqual(findServer('/opt/bin/tosa-lsp', env(['/opt/bin/tosa-lsp', '/usr/bin/tosa-lsp'])),
    { ok: true, path: '/opt/bin/tosa-lsp', source: 'setting' });
  assert.deepEqual(findServer('~/bin/tosa-lsp', env(['/home/u/bin/tosa-lsp'])),
    { ok: true, path: '/home/u/bin/tosa-lsp', source: 'setting' });
});

// A repository must not choose what the editor executes: no
// ${workspaceFolder}, no paths relative to the workspace.
test('${workspaceFolder} and relative settings are refused', () => {
  for (const s of ['${workspaceFolder}/build/bin/tosa-lsp', 'build/bin/tosa-lsp', './tosa-lsp']) {
    const r = findServer(s, env(['/ws/build/bin/tosa-lsp', '/ws/tosa-lsp', '/usr/bin/tosa-lsp']));
    assert.equal(r.ok, false, s);
    if (!r.ok) {
      assert.match(r.message, /must be an absolute path or a name on PATH/);
      assert.deepEqual(r.tried, []);
    }
  }
});

test('bare name setting is looked up on PATH, not in the workspace', () => {
  const r = findServer('tosa-lsp-dev', env(['/ws/tosa-lsp-dev', '/usr/bin/tosa-lsp-dev']));
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
    assert.match(r.message, /Install it: sudo apt install .\/tosa-lsp_0\.1\.0_amd64\.deb .*cmake --install build/);
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

test('package.json: serverPath is machine-scoped, untrusted workspaces are limited', () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const pkg = require('../../package.json');
  const props = pkg.contributes.configuration.properties;
  assert.equal(props['tosaLsp.serverPath'].scope, 'machine');
  assert.equal(props['tosaLsp.compile.overwrite'].scope, 'machine');
  assert.match(props['tosaLsp.serverPath'].markdownDescription, /`\$\{workspaceFolder\}` is not expanded/);
  const u = pkg.capabilities.untrustedWorkspaces;
  assert.equal(u.supported, 'limited');
  for (const k of ['tosaLsp.serverPath', 'tosaLsp.serverArgs', 'tosaLsp.compile.outputDir',
                   'tosaLsp.compile.overwrite', 'tosaLsp.compile.timeoutSeconds',
                   'tosaLsp.compile.memoryLimitMB'])
    assert.ok(u.restrictedConfigurations.includes(k), k);
});
