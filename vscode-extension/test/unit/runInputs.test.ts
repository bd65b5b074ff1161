import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatRunResult,
  formatSeconds,
  inputTemplate,
  inputTypeSpelling,
  parseInputsLine,
  pipelineCommandArguments,
  runCommandArguments,
} from '../../src/runInputs';

test('inputs split on ";" and keep the spaces inside a value', () => {
  assert.deepEqual(parseInputsLine('2x3xf32=1 2 3 4 5 6; 4xi32=7 ;'), ['2x3xf32=1 2 3 4 5 6', '4xi32=7']);
});

test('inputs given as --input= flags, quoted or not', () => {
  assert.deepEqual(parseInputsLine(`--input=4xf32=1 2 3 4 --input='f32=0.5' --input=@x.npy`), ['4xf32=1 2 3 4', 'f32=0.5', '@x.npy']);
});

test('an empty line means random inputs', () => {
  assert.equal(parseInputsLine('   '), undefined);
  assert.equal(parseInputsLine(' ; ;'), undefined);
});

test('the template spells each argument as iree-run-module does', () => {
  assert.equal(inputTemplate(['tensor<4x8xf32>', 'tensor<16xi8>', 'f32', 'tensor<i1>']), '4x8xf32=0; 16xi8=0; f32=0; i1=0');
  assert.equal(inputTypeSpelling('tensor<?x4xf32>'), undefined);
  assert.equal(inputTemplate(['tensor<?x4xf32>', 'f32']), '');
});

test('server command arguments: [uri, fn, inputs|null, seed, device] and [uri, fn|null, chunk|null]', () => {
  assert.deepEqual(runCommandArguments('file:///a.mlir', 'mlp', undefined), ['file:///a.mlir', 'mlp', null, 0, 'reference']);
  assert.deepEqual(runCommandArguments('file:///a.mlir', 'mlp', ['f32=1'], 3, 'local-task'), [
    'file:///a.mlir',
    'mlp',
    ['f32=1'],
    3,
    'local-task',
  ]);
  assert.deepEqual(pipelineCommandArguments('file:///a.mlir', 'mlp'), ['file:///a.mlir', 'mlp', null]);
  assert.deepEqual(pipelineCommandArguments('file:///a.mlir', undefined, 2), ['file:///a.mlir', null, 2]);
  assert.deepEqual(pipelineCommandArguments('file:///a.mlir', 'mlp', undefined, []), ['file:///a.mlir', 'mlp', null, []]);
  assert.deepEqual(pipelineCommandArguments('file:///a.mlir', 'mlp', undefined, null), ['file:///a.mlir', 'mlp', null, null]);
});

test('times read in the unit that suits them', () => {
  assert.equal(formatSeconds(0.00042), '420 µs');
  assert.equal(formatSeconds(0.0042), '4.20 ms');
  assert.equal(formatSeconds(0.25), '250.0 ms');
  assert.equal(formatSeconds(3.5), '3.50 s');
  assert.equal(formatSeconds(undefined), '?');
});

test('the run log lists inputs, results and time; an error says what failed', () => {
  const text = formatRunResult(
    { function: 'f', inputs: ['f32=1'], outputs: ['4xf32=2 2 2 2'], seconds: 0.002, text: '' },
    'a.mlir',
    false,
  );
  assert.match(text, /^@f in a\.mlir \(given inputs\)/);
  assert.match(text, /result\[0\]: 4xf32=2 2 2 2/);
  assert.match(text, /time: 2\.00 ms/);
  assert.equal(formatRunResult({ function: 'f', error: 'boom' }, 'a.mlir', true), '@f in a.mlir: error: boom\n');
});

test('a run on a device says which, how the time was taken, and the compile when there was one', () => {
  const run = {
    function: 'f',
    outputs: ['f32=1'],
    seconds: 0.0002,
    device: 'local-task',
    timing: 'median of 5 calls after a warm-up',
    compile_seconds: 0.37,
  };
  const text = formatRunResult(run, 'a.mlir', true);
  assert.match(text, /^@f in a\.mlir on local-task \(random inputs, seed 0\)/);
  assert.match(text, /time: 200 µs \(median of 5 calls after a warm-up\)/);
  assert.match(text, /compile: 370\.0 ms/);
  assert.doesNotMatch(formatRunResult({ ...run, compile_seconds: null }, 'a.mlir', true), /compile/);
});
