import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BYTECODE_SCHEME, answerField, fileOf, textViewOf } from '../../src/bytecode/uris';

const FILE = { scheme: 'file', authority: '', path: '/ws/model.mlirbc', query: '' };
const REMOTE = { scheme: 'vscode-remote', authority: 'ssh-remote+box', path: '/home/u/m.mlirbc', query: '' };

test('a text view keeps the file path (its name, folder and language) and the file scheme', () => {
  assert.deepEqual(textViewOf(FILE), { scheme: BYTECODE_SCHEME, authority: '', path: '/ws/model.mlirbc', query: 'file' });
  assert.deepEqual(fileOf(textViewOf(FILE)), FILE);
  assert.deepEqual(fileOf(textViewOf(REMOTE)), REMOTE);
  // A view restored without its query (typed by hand) is a local file.
  assert.deepEqual(fileOf({ scheme: BYTECODE_SCHEME, authority: '', path: '/x.mlirbc', query: '' }).scheme, 'file');
});

test("the server's answer gives its field, or its one-line error", () => {
  assert.equal(answerField({ text: 'module {}' }, 'text'), 'module {}');
  assert.equal(answerField({ data: 'TUzvUg==' }, 'data'), 'TUzvUg==');
  assert.throws(() => answerField({ error: 'm.mlirbc: malformed bytecode at byte 9: unexpected end of data' }, 'text'),
    /^Error: m\.mlirbc: malformed bytecode at byte 9/);
  assert.throws(() => answerField(null, 'data'), /gave no bytecode/);
  assert.throws(() => answerField({ text: 'x' }, 'data'), /gave no bytecode/);
});
