import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LanguageClient } from 'vscode-languageclient/node';
import { executeServerCommand } from '../../src/protocol';

/** A client that records what `sendRequest` was given. */
function recordingClient(calls: unknown[][]): LanguageClient {
  return { sendRequest: (...args: unknown[]) => (calls.push(args), Promise.resolve(null)) } as unknown as LanguageClient;
}

test('a command without a token is sent as (method, params): an undefined third argument would make the params an array', async () => {
  const calls: unknown[][] = [];
  await executeServerCommand(recordingClient(calls), 'mlirtext.testItems', ['file:///a.mlir']);
  assert.deepEqual(calls, [['workspace/executeCommand', { command: 'mlirtext.testItems', arguments: ['file:///a.mlir'] }]]);
});

test('a command with a token passes it on, so cancelling the run cancels the request', async () => {
  const calls: unknown[][] = [];
  const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };
  await executeServerCommand(recordingClient(calls), 'mlirtext.runTests', ['file:///a.mlir', null], token);
  assert.equal(calls[0].length, 3);
  assert.equal(calls[0][2], token);
});
