// The TextMate grammar, run by the same engine VS Code uses (vscode-textmate with the
// oniguruma regex library): each kind of token gets its scope, ops by dialect family.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const ROOT = join(__dirname, '..', '..', '..');
const EXAMPLES = join(ROOT, '..', 'examples');
let grammar: textmate.IGrammar;

before(async () => {
  const wasm = readFileSync(join(ROOT, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) =>
      scope === 'source.mlir'
        ? textmate.parseRawGrammar(readFileSync(join(ROOT, 'syntaxes', 'mlir.tmLanguage.json'), 'utf8'), 'mlir.tmLanguage.json')
        : null,
  });
  grammar = (await registry.loadGrammar('source.mlir'))!;
});

/** Tokenize `lines` in order (state carries over) and return each line's tokens with their text. */
function tokenize(lines: string[]): { text: string; scopes: string[] }[][] {
  let state = textmate.INITIAL;
  return lines.map((line) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    return r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
  });
}

/** The scopes of the token that starts `token`'s first occurrence in `line`. */
function scopesAt(line: string, token: string, context: string[] = []): string {
  const all = tokenize([...context, line]);
  const tokens = all[all.length - 1];
  const at = line.indexOf(token);
  assert.ok(at >= 0, `${token} not in ${line}`);
  let offset = 0;
  for (const t of tokens) {
    if (offset <= at && at < offset + t.text.length) return t.scopes.join(' ');
    offset += t.text.length;
  }
  throw new Error(`no token at ${at}`);
}

test('ops are scoped by dialect family', () => {
  const cases: [string, string, string][] = [
    ['  %2 = stablehlo.add %0, %1 : tensor<4xf32>', 'stablehlo.add', 'entity.name.function.op.hlo.dialect.mlir'],
    ['  %2 = "mhlo.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>', 'mhlo', 'op.hlo'],
    ['  %2 = tosa.matmul %a, %b : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>', 'tosa.matmul', 'op.tosa'],
    ['  %3 = linalg.generic {indexing_maps = [#map]} ins(%0 : tensor<4xf32>)', 'linalg.generic', 'op.linalg'],
    ['  scf.for %i = %c0 to %c4 step %c1 {', 'scf.for', 'op.loops'],
    ['  %7 = memref.load %0[%i] : memref<4xf32>', 'memref.load', 'op.loops'],
    ['  %17 = llvm.fadd %14, %16 : f32', 'llvm.fadd', 'op.llvm'],
    ['  %9 = arith.addf %7, %8 : f32', 'arith.addf', 'keyword.other.op.core'],
    ['  %q = quant.qcast %x : tensor<4xf32>', 'quant.qcast', 'entity.name.function.op.dialect.mlir'],
  ];
  for (const [line, token, scope] of cases) {
    assert.ok(scopesAt(line, token).includes(scope), `${token}: ${scopesAt(line, token)}`);
  }
});

test('values, block labels, symbols, types, attributes', () => {
  const line = '  %0 = llvm.call @malloc(%2) : (i64) -> !llvm.ptr';
  assert.match(scopesAt(line, '%0'), /variable\.other\.ssa/);
  assert.match(scopesAt(line, '@malloc'), /entity\.name\.function\.symbol/);
  assert.match(scopesAt(line, 'i64'), /storage\.type\.builtin/);
  assert.match(scopesAt(line, '!llvm.ptr'), /storage\.type\.dialect/);
  assert.match(scopesAt('^bb3(%i_1: i64):', '^bb3'), /entity\.name\.label\.block/);
  assert.match(scopesAt('  %x = foo.bar %a : tensor<4x?xf32>', 'tensor'), /storage\.type\.shaped/);
  assert.match(scopesAt('  %x = foo.bar %a : tensor<4x?xf32>', '4x'), /constant\.numeric\.shape/);
  assert.match(scopesAt('  %x = foo.bar %a : tensor<4x?xf32>', 'f32'), /storage\.type\.builtin/);
  assert.match(scopesAt('  %0 = "mhlo.add"(%a, %b) {name = "x.y"} : (tensor<0x4xf32>) -> tensor<f32>', '"x.y"'), /string\.quoted/);
  assert.match(scopesAt('  %0 = "mhlo.add"(%a, %b) {name = "x.y"} : (tensor<0x4xf32>) -> tensor<f32>', '0x4x'), /constant\.numeric\.shape/);
  assert.match(scopesAt('#map = affine_map<(d0) -> (d0)>', '#map'), /entity\.name\.type\.alias\.attribute/);
  assert.match(scopesAt('  %y = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]', 'contracting_dims'), /keyword\.other/);
  assert.match(scopesAt('  %c = arith.constant {fastmath = 1} 0 : i32', 'fastmath'), /variable\.other\.property\.attribute/);
});

test('dense literals, strings, numbers', () => {
  const line = '  %c = stablehlo.constant dense<[1.5, -2.0e3, 0xFF800000]> : tensor<3xf32>';
  assert.match(scopesAt(line, 'dense'), /support\.function\.attribute\.literal/);
  assert.match(scopesAt(line, '1.5'), /meta\.attribute\.literal\.mlir constant\.numeric\.float/);
  assert.match(scopesAt(line, '-2.0e3'), /constant\.numeric\.float/);
  assert.match(scopesAt(line, '0xFF800000'), /constant\.numeric\.hex/);
  assert.match(scopesAt('  %8 = llvm.icmp "slt" %i, %6 : i64', '"slt"'), /string\.quoted\.double/);
  assert.match(scopesAt('  %8 = llvm.mlir.constant(256) : i64', '256'), /constant\.numeric\.integer/);
});

test('comments, check lines and the split marker', () => {
  assert.match(scopesAt('  return %y : tensor<4xf32>  // %y is not a value here', '%y is'), /comment\.line/);
  assert.match(scopesAt('// CHECK-NEXT: tosa.add', 'CHECK-NEXT:'), /keyword\.other\.directive\.check/);
  assert.match(scopesAt('// -----', '// -----'), /meta\.separator\.split-input/);
  assert.doesNotMatch(scopesAt('// ------ not a marker: text after it', '//'), /meta\.separator/);
});

test('every op in the bundled examples gets an op scope', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.mlir'));
  assert.ok(files.length >= 4);
  for (const file of files) {
    const lines = readFileSync(join(EXAMPLES, file), 'utf8').split('\n');
    tokenize(lines).forEach((tokens, i) => {
      const code = lines[i].replace(/\/\/.*$/, '');
      const m = /^\s*(?:%[\w.:#, %]+=\s*)?"?([a-z_]+\.[a-z_.]+)/.exec(code);
      if (!m) return;
      const tok = tokens.find((t) => t.text.replace(/"/g, '') === m[1].split('.')[0] || t.text.includes(m[1]));
      assert.ok(tok && /\.op\./.test(tok.scopes.join(' ')), `${file}:${i + 1}: ${m[1]} has ${tok?.scopes.join(' ')}`);
    });
  }
});
