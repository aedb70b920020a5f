// Tokenizes MLIR with the extension's TextMate grammar through the same
// engine VS Code uses (vscode-textmate + oniguruma WASM).
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const root = path.join(__dirname, '..', '..');

async function grammar(): Promise<textmate.IGrammar> {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s: string[]) => new oniguruma.OnigScanner(s),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(
      fs.readFileSync(path.join(root, 'syntaxes', 'mlir.tmLanguage.json'), 'utf8'), 'mlir.tmLanguage.json'),
  });
  const g = await registry.loadGrammar('source.mlir.tosa-lsp');
  assert.ok(g);
  return g;
}

/** [text, innermost scope] per token, for each line. */
function tokenize(g: textmate.IGrammar, text: string): [string, string][][] {
  let state = textmate.INITIAL;
  return text.split('\n').map(line => {
    const r = g.tokenizeLine(line, state);
    state = r.ruleStack;
    return r.tokens.map(t => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]] as [string, string]);
  });
}

function scopeOf(lines: [string, string][][], line: number, text: string): string | undefined {
  return lines[line].find(([t]) => t === text)?.[1];
}

const sample = [
  'func.func @add(%arg0: tensor<2x?xf32>, %arg1: tensor<*xf32>) -> tensor<2x3xf32> {',
  '  %0 = tosa.add %arg0, %arg1 : (tensor<2x?xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>',
  '  %1 = "tfl.add"(%0, %0) {fused_activation_function = "NONE"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
  '  %c = arith.constant dense<1.5e-3> : tensor<3xf32> // trailing',
  '  cf.br ^bb1(%c : tensor<3xf32>)',
  '^bb1(%x: tensor<3xf32>):',
  '  %m = tosa.mul %0, %0 {shift = 0 : i8} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
  '  return %1 : tensor<2x3xf32>',
  '}',
  '// -----',
  '#map = affine_map<(d0) -> (d0)>',
  '%v = llvm.mlir.constant(42 : i64) : !llvm.ptr<1>',
].join('\n');

test('grammar: ops, values, symbols, types, attributes, markers', async () => {
  const g = await grammar();
  const t = tokenize(g, sample);
  assert.equal(scopeOf(t, 0, 'func'), 'entity.name.namespace.dialect.mlir');
  assert.equal(scopeOf(t, 0, 'func'), 'entity.name.namespace.dialect.mlir');
  assert.equal(scopeOf(t, 0, '@add'), 'entity.name.function.symbol.mlir');
  assert.equal(scopeOf(t, 0, '%arg0'), 'variable.other.ssa.mlir');
  assert.equal(scopeOf(t, 0, 'tensor'), 'storage.type.shaped.mlir');
  assert.equal(scopeOf(t, 0, '?'), 'keyword.operator.dim.dynamic.mlir');
  assert.equal(scopeOf(t, 0, '*'), 'keyword.operator.dim.unranked.mlir');
  assert.equal(scopeOf(t, 0, '2'), 'constant.numeric.dim.static.mlir');
  assert.equal(scopeOf(t, 0, 'x'), 'punctuation.separator.dim.mlir');
  assert.equal(scopeOf(t, 0, 'f32'), 'storage.type.builtin.mlir');
  assert.equal(scopeOf(t, 1, 'tosa'), 'entity.name.namespace.dialect.mlir');
  assert.equal(scopeOf(t, 1, 'add'), 'entity.name.function.op.mlir');
  assert.equal(scopeOf(t, 2, 'tfl'), 'entity.name.namespace.dialect.mlir');
  assert.equal(scopeOf(t, 2, 'add'), 'entity.name.function.op.generic.mlir');
  assert.equal(scopeOf(t, 2, 'fused_activation_function'), 'variable.parameter.attribute.mlir');
  assert.equal(scopeOf(t, 2, 'NONE'), 'string.quoted.double.mlir');
  assert.equal(scopeOf(t, 3, 'dense'), 'support.type.attribute.mlir');
  assert.equal(scopeOf(t, 3, '1.5e-3'), 'constant.numeric.float.mlir');
  assert.equal(scopeOf(t, 3, ' trailing'), 'comment.line.double-slash.mlir');
  assert.equal(scopeOf(t, 4, '^bb1'), 'entity.name.label.block.mlir');
  assert.equal(scopeOf(t, 5, '^bb1'), 'entity.name.label.block.mlir');
  assert.equal(scopeOf(t, 6, 'shift'), 'variable.parameter.attribute.mlir');
  assert.equal(scopeOf(t, 6, '0'), 'constant.numeric.integer.mlir');
  assert.equal(scopeOf(t, 6, 'i8'), 'storage.type.builtin.mlir');
  assert.equal(scopeOf(t, 9, '// -----'), 'markup.heading.mlir');
  assert.equal(scopeOf(t, 10, 'map'), 'entity.name.tag.attribute.mlir');
  assert.equal(scopeOf(t, 10, 'affine_map'), 'support.type.attribute.mlir');
  assert.equal(scopeOf(t, 11, 'ptr'), 'entity.name.type.dialect.mlir');
  assert.equal(scopeOf(t, 11, '42'), 'constant.numeric.integer.mlir');
  // A grammar that leaks a begin/end rule would leave the last line inside it.
  assert.deepEqual(t[8], [['}', 'source.mlir.tosa-lsp']]);
});
