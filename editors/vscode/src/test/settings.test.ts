import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  didChangeConfigurationParams, loweringMode, loweringStage, objectGetter, toServerSettings, userSetGetter,
} from '../settings';

test('nothing set: nothing sent (the server and the project file decide)', () => {
  assert.deepEqual(toServerSettings(objectGetter({})), { compile: {} });
});

test('VS Code keys map to the server JSON', () => {
  const s = toServerSettings(objectGetter({
    'hints.inferredShapes': false,
    'hints.runtimeChecks': true,
    'info.publish': true,
    'info.refinable': false,
    'info.runtimeChecks': false,
    'info.dynamicToStatic': true,
    'shapeChecks': false,
    'extraBroadcastableOps': ['tfl.add', ' "tfl.mul" ', '', 'tfl.add', 3],
    'compile.outputDir': '${workspaceFolder}/out',
    'compile.overwrite': true,
    'compile.timeoutSeconds': 30,
    'compile.memoryLimitMB': 2048,
    'compile.threads': 2,
  }), { workspaceFolder: '/ws', userHome: '/home/u' });
  assert.deepEqual(s, {
    hints: { inferredShapes: false, runtimeChecks: true },
    info: { publish: true, refinable: false, runtimeChecks: false, dynamicToStatic: true },
    shapeChecks: false,
    extraBroadcastableOps: ['tfl.add', 'tfl.mul'],
    compile: { outputDir: '/ws/out', overwrite: true, timeoutSeconds: 30, memoryLimitMB: 2048, threads: 2 },
  });
});

test('validate: a boolean or the items of check --validate', () => {
  assert.deepEqual(toServerSettings(objectGetter({ 'validate': true })), { validate: true, compile: {} });
  assert.deepEqual(toServerSettings(objectGetter({ 'validate': 'pro_fp,strict' })),
                   { validate: 'pro_fp,strict', compile: {} });
  assert.deepEqual(toServerSettings(objectGetter({ 'validate': 3 })), { compile: {} });
});

test('compile.threads 0 is the machine\'s cores', () => {
  assert.deepEqual(toServerSettings(objectGetter({ 'compile.threads': 0 })), { compile: { threads: 0 } });
});

test('only the keys set, one of a group alone', () => {
  assert.deepEqual(toServerSettings(objectGetter({ 'info.refinable': false })),
                   { info: { refinable: false }, compile: {} });
});

test('bad values are left out', () => {
  const s = toServerSettings(objectGetter({
    'hints.inferredShapes': 'yes',
    'shapeChecks': 1,
    'extraBroadcastableOps': 'tfl.add',
    'compile.outputDir': '  ',
    'compile.timeoutSeconds': -1,
    'compile.memoryLimitMB': 1.5,
    'compile.threads': -1,
  }));
  assert.deepEqual(s, { compile: {} });
});

test('the getter answers what the user set, never package.json defaults', () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown; defaultValue?: unknown }> = {
    'hints.inferredShapes': { defaultValue: true },
    'info.refinable': { defaultValue: true, globalValue: false },
    'info.runtimeChecks': { defaultValue: false, globalValue: false, workspaceValue: true },
    'info.dynamicToStatic': { globalValue: true, workspaceValue: true, workspaceFolderValue: false },
  };
  const get = userSetGetter({ inspect: k => values[k] });
  assert.equal(get('hints.inferredShapes'), undefined);
  assert.equal(get('info.refinable'), false);
  assert.equal(get('info.runtimeChecks'), true);
  assert.equal(get('info.dynamicToStatic'), false);
  assert.equal(get('shapeChecks'), undefined);
  assert.deepEqual(toServerSettings(get), {
    info: { refinable: false, runtimeChecks: true, dynamicToStatic: false },
    compile: {},
  });
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
