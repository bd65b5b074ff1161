import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Debouncer,
  checkedItems,
  checkedResults,
  failureMessage,
  idsToRun,
  serverIdOf,
  testId,
} from '../../src/testing/model';

const FILE = 'file:///w/tests.mlir';

test("a test's panel id carries its file and the server's id, and gives the server's id back", () => {
  const id = testId(FILE, 'function:2:adds');
  assert.equal(id, 'file:///w/tests.mlir#function:2:adds');
  assert.equal(serverIdOf(FILE, id), 'function:2:adds');
  assert.equal(serverIdOf(FILE, FILE), undefined);
  assert.equal(serverIdOf('file:///w/other.mlir', id), undefined);
});

test('a file runs all its tests, or those asked for, less the excluded, each once', () => {
  const children = ['chunk:0', 'chunk:1', 'function:2:adds'];
  assert.deepEqual(idsToRun(children, 'file', new Set()), children);
  assert.deepEqual(idsToRun(children, 'file', new Set(['chunk:1'])), ['chunk:0', 'function:2:adds']);
  assert.deepEqual(idsToRun(children, ['chunk:1', 'chunk:1', 'chunk:9'], new Set()), ['chunk:1']);
  assert.deepEqual(idsToRun(children, ['chunk:1'], new Set(['chunk:1'])), []);
});

test('a failure with two sides is a diff, one without is its message', () => {
  const range: [number, number, number, number] = [3, 5, 3, 40];
  assert.deepEqual(failureMessage({ message: 'expected error "x" was not produced', range, expected: 'error: x', actual: 'error: y' }), {
    message: 'expected error "x" was not produced',
    diff: { expected: 'error: x', actual: 'error: y' },
  });
  // an unexpected diagnostic: nothing expected it
  assert.deepEqual(failureMessage({ message: 'unexpected error: y', range, expected: '', actual: 'error: y' }).diff, {
    expected: '',
    actual: 'error: y',
  });
  assert.deepEqual(failureMessage({ message: 'time limit', range, expected: '', actual: '' }), { message: 'time limit' });
});

test('answers that are not what the server gives are an error, never a throw', () => {
  assert.deepEqual(checkedItems(null), { items: [], error: 'the language server gave no test items' });
  assert.deepEqual(checkedItems({ items: [], error: "unknown document 'x'" }), { items: [], error: "unknown document 'x'" });
  assert.deepEqual(checkedResults({ error: 'internal error (see the server log)' }), {
    results: [],
    error: 'internal error (see the server log)',
  });
  const ok = { results: [{ id: 'chunk:0', status: 'passed', message: '', seconds: 0.01, failures: [] }], error: null };
  assert.deepEqual(checkedResults(ok), ok);
});

test('a burst of edits to one file refreshes it once, other files on their own', async () => {
  const calls: string[] = [];
  const d = new Debouncer(20, (key) => calls.push(key));
  d.schedule('a');
  d.schedule('a');
  d.schedule('b');
  d.schedule('a');
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(calls.sort(), ['a', 'b']);
  d.schedule('a');
  d.dispose();
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(calls.length, 2);
});
