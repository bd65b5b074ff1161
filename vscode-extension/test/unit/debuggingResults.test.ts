import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LastInputs, bisectArguments, describeFinding, deviceNames, faultFlags, reduceArguments } from '../../src/debugging/results';

test('the bisect command takes the last inputs (or null: random), the faults and the devices', () => {
  assert.deepEqual(bisectArguments('file:///a.mlir', 'f', ['4xf32=1'], []), ['file:///a.mlir', 'f', ['4xf32=1'], 0, [], []]);
  assert.deepEqual(bisectArguments('file:///a.mlir', 'f', undefined, ['--debug-crash=cse:arith.addf'], ['local-task']), [
    'file:///a.mlir',
    'f',
    null,
    0,
    ['--debug-crash=cse:arith.addf'],
    ['local-task'],
  ]);
});

test('the devices setting keeps device names only', () => {
  assert.deepEqual(deviceNames(['local-task', 3, '', 'local-sync']), ['local-task', 'local-sync']);
  assert.deepEqual(deviceNames('local-task'), []);
  assert.deepEqual(deviceNames(undefined), []);
});

test('the reduce command leaves the faults to the server unless given', () => {
  assert.deepEqual(reduceArguments('u', 'f', undefined), ['u', 'f', null]);
  assert.deepEqual(reduceArguments('u', 'f', []), ['u', 'f', null]);
  assert.deepEqual(reduceArguments('u', 'f', ['--debug-crash=cse:arith.addf']), ['u', 'f', ['--debug-crash=cse:arith.addf']]);
});

test('the faults setting keeps --debug-* strings only', () => {
  assert.deepEqual(faultFlags(['--debug-miscompile=canonicalize:arith.maximumf', 3, 'rm -rf /']), [
    '--debug-miscompile=canonicalize:arith.maximumf',
  ]);
  assert.deepEqual(faultFlags('--debug-crash=cse:arith.addf'), []);
  assert.deepEqual(faultFlags(undefined), []);
});

test('a finding is described by its summary, an error by its message', () => {
  assert.equal(describeFinding({ summary: "pass 5 of 13 ('canonicalize'), diverged" }), "pass 5 of 13 ('canonicalize'), diverged");
  assert.equal(describeFinding({ error: 'no function named @g' }), 'error: no function named @g');
});

test('the last inputs are kept per document and function', () => {
  const last = new LastInputs();
  last.remember('file:///a.mlir', 'f', ['4xf32=1']);
  last.remember('file:///b.mlir', 'f', undefined);
  assert.deepEqual(last.of('file:///a.mlir', 'f'), ['4xf32=1']);
  assert.equal(last.of('file:///b.mlir', 'f'), undefined);
  assert.equal(last.of('file:///a.mlir', 'g'), undefined);
});
