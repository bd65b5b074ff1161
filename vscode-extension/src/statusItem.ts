/**
 * The status-bar item that says what the language server is doing (a cold start can take
 * tens of seconds, during which F12 and hover do nothing): starting, ready, error (the
 * reason in the tooltip, a click opens the server's output) or off.
 *
 * The server does not index the workspace at start (documents are read when opened or
 * asked for), so there is no "indexing N files" state to show.
 */
import * as vscode from 'vscode';
import type { ServerState } from './serverProcess';

/** The command a click runs: the server's output, or the setting that turned it off. */
export const SHOW_OUTPUT_COMMAND = 'mlirtext.showServerOutput';
const SETTINGS_COMMAND = 'workbench.action.openSettings';

export interface StatusView {
  text: string;
  tooltip: string;
  /** Shown on the status bar's error colours. */
  error: boolean;
  command: vscode.Command;
}

/** What the item shows for the server's state; `failure` is the message of a failed start or a crash. */
export function statusView(state: ServerState, failure?: string): StatusView {
  const output: vscode.Command = { title: 'Show Output', command: SHOW_OUTPUT_COMMAND };
  switch (state) {
    case 'starting':
      return { text: '$(sync~spin) mlirtext: starting', tooltip: 'The mlirtext language server is starting (click for its output)', error: false, command: output };
    case 'running':
      return { text: '$(check) mlirtext: ready', tooltip: 'The mlirtext language server is running (click for its output)', error: false, command: output };
    case 'failed':
      return { text: '$(error) mlirtext: error', tooltip: firstLine(failure) ?? 'The mlirtext language server is not running', error: true, command: output };
    case 'stopped':
      return { text: 'mlirtext: stopped', tooltip: 'The mlirtext language server is stopped (click for its output)', error: false, command: output };
    case 'disabled':
      return {
        text: 'mlirtext: off',
        tooltip: 'The mlirtext language server is turned off (mlirtext.server.enabled): highlighting only',
        error: false,
        command: { title: 'Open Settings', command: SETTINGS_COMMAND, arguments: ['mlirtext.server.enabled'] },
      };
  }
}

function firstLine(text: string | undefined): string | undefined {
  const line = text?.split('\n').find((l) => l.trim() !== '');
  return line?.trim();
}

/** Keeps `item` in step with the server's state changes. */
export class StatusItem implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly item: vscode.StatusBarItem,
    server: { state: ServerState; failure: string | undefined; onDidChangeState: vscode.Event<ServerState> },
  ) {
    item.name = 'mlirtext language server';
    this.show(server.state, server.failure);
    this.subscription = server.onDidChangeState((state) => this.show(state, server.failure));
  }

  private show(state: ServerState, failure: string | undefined): void {
    const view = statusView(state, failure);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
