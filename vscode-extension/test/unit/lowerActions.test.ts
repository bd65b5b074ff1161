import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFailure, functionLowerings, lowerings, moduleLowerings, nextLevelLowering } from '../../src/lowerActions';

// The shape the server answers textDocument/codeAction with (server/mlirtext_server/server.py).
const act = (title: string, args: unknown[]) => ({
  title,
  kind: 'refactor.rewrite',
  command: { title, command: 'mlirtext.applyAction', arguments: ['file:///m.mlir', 3, ...args] },
});
const ANSWER = [
  act('Lower @mlp to tosa (next level)', ['lower-function', 0, 'mlp', 'tosa']),
  act('Lower @mlp to linalg', ['lower-function', 0, 'mlp', 'linalg']),
  act('Fold constants in @mlp', ['fold-function', 0, 'mlp', null]),
  act('Lower module to tosa', ['lower-module', 0, null, 'tosa']),
  { title: 'Change the result type', kind: 'quickfix', edit: {} },
  { title: 'Another extension', command: { command: 'other.cmd', arguments: [] } },
];

test('only the server lowering actions are kept, with their function and level', () => {
  const all = lowerings(ANSWER);
  assert.deepEqual(
    all.map((l) => [l.action, l.name, l.level, l.next]),
    [
      ['lower-function', 'mlp', 'tosa', true],
      ['lower-function', 'mlp', 'linalg', false],
      ['fold-function', 'mlp', undefined, false],
      ['lower-module', undefined, 'tosa', false],
    ],
  );
  assert.deepEqual(all[0].arguments, ['file:///m.mlir', 3, 'lower-function', 0, 'mlp', 'tosa']);
});

test('next level is the action the server marks, whatever its position', () => {
  const reordered = lowerings([ANSWER[1], ANSWER[3], ANSWER[0]]);
  assert.equal(nextLevelLowering(reordered)?.level, 'tosa');
  assert.equal(nextLevelLowering(lowerings([ANSWER[1]]))?.level, 'linalg');
  assert.equal(nextLevelLowering(lowerings([ANSWER[3]])), undefined);
});

test('function and module lowerings are told apart', () => {
  const all = lowerings(ANSWER);
  assert.deepEqual(functionLowerings(all).map((l) => l.level), ['tosa', 'linalg']);
  assert.deepEqual(moduleLowerings(all).map((l) => l.level), ['tosa']);
  assert.deepEqual(lowerings(null), []);
});

test('applyAction answers: applied, refused with a message, or nothing', () => {
  assert.equal(applyFailure({ applied: true }), undefined);
  assert.equal(applyFailure({ applied: false, message: 'cannot lower to tosa: x' }), 'cannot lower to tosa: x');
  assert.match(applyFailure(null)!, /did not answer/);
  assert.match(applyFailure({ applied: false })!, /did not apply/);
});
