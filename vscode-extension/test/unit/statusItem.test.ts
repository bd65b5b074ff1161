/**
 * The status-bar item: the text, tooltip and click for each server state, and an item that
 * follows the server's state changes (against a stand-in for the `vscode` module).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

class ThemeColor {
  constructor(readonly id: string) {}
}
const fakeVscode = { ThemeColor };
const Module = require('node:module');
const load = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakeVscode : load.call(this, request, ...rest);
};
const { SHOW_OUTPUT_COMMAND, StatusItem, statusView } = require('../../src/statusItem');

test('each state has its text; only a failure is an error', () => {
  assert.equal(statusView('starting').text, '$(sync~spin) mlirtext: starting');
  assert.equal(statusView('running').text, '$(check) mlirtext: ready');
  assert.equal(statusView('failed', 'x').text, '$(error) mlirtext: error');
  assert.equal(statusView('disabled').text, 'mlirtext: off');
  assert.equal(statusView('stopped').text, 'mlirtext: stopped');
  for (const state of ['starting', 'running', 'disabled', 'stopped']) {
    assert.equal(statusView(state).error, false, state);
  }
  assert.equal(statusView('failed', 'x').error, true);
});

test('a failure shows its first line in the tooltip and a click opens the output', () => {
  const message = "\nmlirtext language server: python3 cannot import mlirtext: No module named 'mlirtext'\n  Install it with: pip install mlirtext\n";
  const view = statusView('failed', message);
  assert.equal(view.tooltip, "mlirtext language server: python3 cannot import mlirtext: No module named 'mlirtext'");
  assert.equal(view.command.command, SHOW_OUTPUT_COMMAND);
  assert.equal(statusView('failed').tooltip, 'The mlirtext language server is not running');
});

test('off opens the setting that turned it off', () => {
  const view = statusView('disabled');
  assert.equal(view.command.command, 'workbench.action.openSettings');
  assert.deepEqual(view.command.arguments, ['mlirtext.server.enabled']);
  assert.match(view.tooltip, /mlirtext\.server\.enabled/);
});

test('the item follows the server from starting to ready to error', () => {
  const listeners: ((state: string) => void)[] = [];
  const server = {
    state: 'starting',
    failure: undefined as string | undefined,
    onDidChangeState: (listener: (state: string) => void) => {
      listeners.push(listener);
      return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
    },
  };
  let shown = 0;
  let disposed = false;
  const item: any = { show: () => shown++, dispose: () => (disposed = true) };
  const status = new StatusItem(item, server);
  assert.equal(item.text, '$(sync~spin) mlirtext: starting');
  assert.equal(item.backgroundColor, undefined);
  assert.equal(shown, 1);

  server.state = 'running';
  listeners.forEach((l) => l('running'));
  assert.equal(item.text, '$(check) mlirtext: ready');

  server.state = 'failed';
  server.failure = 'the language server stopped (see the "mlirtext language server" output)';
  listeners.forEach((l) => l('failed'));
  assert.equal(item.text, '$(error) mlirtext: error');
  assert.equal(item.tooltip, server.failure);
  assert.equal(item.backgroundColor.id, 'statusBarItem.errorBackground');
  assert.equal(item.command.command, SHOW_OUTPUT_COMMAND);

  status.dispose();
  assert.equal(listeners.length, 0);
  assert.ok(disposed);
});
