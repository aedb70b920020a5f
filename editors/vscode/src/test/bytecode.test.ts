import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytecodeOfResult, errorText, failurePage, isBytecode, openFailure, saveFailure, textOfResult } from '../bytecode';

test('isBytecode: the magic number only', () => {
  assert.ok(isBytecode(new Uint8Array([0x4d, 0x4c, 0xef, 0x52, 7])));
  assert.ok(!isBytecode(new TextEncoder().encode('module {}')));
  assert.ok(!isBytecode(new Uint8Array([0x4d, 0x4c])));
});

test('bytecodeOfResult: base64 bytecode, else an error', () => {
  const b = bytecodeOfResult({ output: Buffer.from([0x4d, 0x4c, 0xef, 0x52, 1, 2]).toString('base64') });
  assert.deepEqual([...b], [0x4d, 0x4c, 0xef, 0x52, 1, 2]);
  assert.throws(() => bytecodeOfResult({ output: Buffer.from('module {}').toString('base64') }), /not MLIR bytecode/);
  assert.throws(() => bytecodeOfResult({}), /without bytecode/);
  assert.throws(() => bytecodeOfResult(null), /without bytecode/);
});

test('textOfResult', () => {
  assert.equal(textOfResult({ output: 'module {}\n' }), 'module {}\n');
  assert.throws(() => textOfResult({ output: 3 }), /without text/);
});

test('messages name the file and the reason', () => {
  const e = { message: "/w/bad.mlirbc: not MLIR bytecode (it does not start with the bytecode magic number 'ML\\xEFR')", code: -32803 };
  assert.match(openFailure('bad.mlirbc', e), /^Cannot open bad\.mlirbc as MLIR text: .*not MLIR bytecode.*The file was not changed\.$/);
  assert.match(saveFailure('m.mlirbc', new Error('the file has errors; fix them first')), /^m\.mlirbc not saved .*fix them first$/);
  assert.match(errorText(new Error('Unhandled method mlir/convertFromBytecode')), /update the server/);
  assert.ok(!failurePage('<b>').includes('<b>'));
});
