import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  didChangeConfigurationParams, loweringMode, loweringStage, objectGetter, toServerSettings,
} from '../settings';

test('defaults when nothing is set', () => {
  assert.deepEqual(toServerSettings(objectGetter({})), {
    hints: { inferredShapes: true, runtimeChecks: true },
    info: { refinable: true, runtimeChecks: true, dynamicToStatic: true },
    extraBroadcastableOps: [],
    compile: {},
  });
});

test('VS Code keys map to the server JSON', () => {
  const s = toServerSettings(objectGetter({
    'hints.inferredShapes': false,
    'hints.runtimeChecks': true,
    'info.refinable': false,
    'info.runtimeChecks': false,
    'info.dynamicToStatic': true,
    'extraBroadcastableOps': ['tfl.add', ' "tfl.mul" ', '', 'tfl.add', 3],
    'compile.outputDir': '${workspaceFolder}/out',
    'compile.overwrite': true,
    'compile.timeoutSeconds': 30,
    'compile.memoryLimitMB': 2048,
  }), { workspaceFolder: '/ws', userHome: '/home/u' });
  assert.deepEqual(s, {
    hints: { inferredShapes: false, runtimeChecks: true },
    info: { refinable: false, runtimeChecks: false, dynamicToStatic: true },
    extraBroadcastableOps: ['tfl.add', 'tfl.mul'],
    compile: { outputDir: '/ws/out', overwrite: true, timeoutSeconds: 30, memoryLimitMB: 2048 },
  });
});

test('bad values fall back to defaults / are left out', () => {
  const s = toServerSettings(objectGetter({
    'hints.inferredShapes': 'yes',
    'extraBroadcastableOps': 'tfl.add',
    'compile.outputDir': '  ',
    'compile.timeoutSeconds': -1,
    'compile.memoryLimitMB': 1.5,
  }));
  assert.equal(s.hints.inferredShapes, true);
  assert.deepEqual(s.extraBroadcastableOps, []);
  assert.deepEqual(s.compile, {});
});

test('~ in outputDir', () => {
  const s = toServerSettings(objectGetter({ 'compile.outputDir': '~/tosa-out' }), { userHome: '/home/u' });
  assert.equal(s.compile.outputDir, '/home/u/tosa-out');
});

test('didChangeConfiguration nests under tosaLsp', () => {
  const s = toServerSettings(objectGetter({}));
  assert.deepEqual(didChangeConfigurationParams(s), { settings: { tosaLsp: s } });
});

test('lowering stage and mode', () => {
  assert.equal(loweringStage(objectGetter({})), 'linalg');
  assert.equal(loweringStage(objectGetter({ 'lowering.stage': 'llvm' })), 'llvm');
  assert.equal(loweringStage(objectGetter({ 'lowering.stage': 'asm' })), 'linalg');
  assert.equal(loweringMode(objectGetter({})), 'fast');
  assert.equal(loweringMode(objectGetter({ 'lowering.mode': 'versioned' })), 'versioned');
  assert.equal(loweringMode(objectGetter({ 'lowering.mode': 'upstream' })), 'upstream');
  assert.equal(loweringMode(objectGetter({ 'lowering.mode': 'quick' })), 'fast');
});
