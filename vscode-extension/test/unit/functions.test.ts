import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { argumentTypes, definedValues, definitionLine, findFunctions, functionAtLine } from '../../src/functions';

const EXAMPLES = join(__dirname, '..', '..', '..', '..', 'examples');

test('the bundled MLP: one function, its lines and argument types', () => {
  const text = readFileSync(join(EXAMPLES, 'mlp_stablehlo.mlir'), 'utf8');
  const fns = findFunctions(text);
  assert.equal(fns.length, 1);
  const [mlp] = fns;
  assert.equal(mlp.name, 'mlp');
  assert.equal(mlp.line, 1);
  assert.equal(text.split('\n')[mlp.endLine].trim(), '}');
  assert.deepEqual(mlp.argTypes, ['tensor<4x8xf32>', 'tensor<8x16xf32>', 'tensor<16xf32>', 'tensor<16x4xf32>', 'tensor<4xf32>']);
});

const SEVERAL = `// two functions and a declaration
func.func private @ext(f32) -> f32
func.func @a(%x: f32) -> f32 {
  %0 = "test.op"() ({
    ^bb0:  // a nested region's braces
  }) : () -> f32   // "}" in a comment
  return %0 : f32
}

// -----
llvm.func @b(%p: !llvm.ptr) -> !llvm.ptr attributes {mlirtext.abi = (tensor<4xf32>) -> tensor<4xf32>} {
  llvm.return %p : !llvm.ptr
}
func.func @"quoted name"() {
  return
}
`;

test('declarations, nested regions, attribute dicts and quoted names', () => {
  const fns = findFunctions(SEVERAL);
  assert.deepEqual(
    fns.map((f) => [f.name, f.line, f.endLine]),
    [
      ['ext', 1, 1],
      ['a', 2, 7],
      ['b', 10, 12],
      ['quoted name', 13, 15],
    ],
  );
  assert.deepEqual(fns[0].argTypes, ['f32']);
  assert.deepEqual(fns[2].argTypes, ['!llvm.ptr']);
});

test('the function at a line is the one whose body holds it', () => {
  const fns = findFunctions(SEVERAL);
  assert.equal(functionAtLine(fns, 5)?.name, 'a');
  assert.equal(functionAtLine(fns, 11)?.name, 'b');
  assert.equal(functionAtLine(fns, 8), undefined);
});

test('argument types skip names and argument attributes', () => {
  assert.deepEqual(argumentTypes('func.func @f(%a: tensor<2x?xf32> {jax.arg = "x, y"}, %b: memref<4xi8, strided<[1]>>) -> i1'), [
    'tensor<2x?xf32>',
    'memref<4xi8, strided<[1]>>',
  ]);
  assert.deepEqual(argumentTypes('func.func @g() -> ()'), []);
});

test('definitions: results of any arity, and arguments', () => {
  assert.deepEqual(definedValues('  %a, %b:2 = "x.y"() : () -> (f32, f32, f32)'), ['%a', '%b']);
  assert.deepEqual(definedValues('  return %a : f32'), []);
  const lines = SEVERAL.split('\n');
  const a = findFunctions(SEVERAL)[1];
  assert.equal(definitionLine(lines, a, '%0'), 3);
  assert.equal(definitionLine(lines, a, '%x'), 2);
  assert.equal(definitionLine(lines, a, '%nope'), undefined);
});
