/**
 * Starting, stopping and restarting the language server process (through
 * vscode-languageclient), with a check before the start that the chosen
 * interpreter can import mlirtext, so a missing install is a clear message and
 * not a client that silently fails to connect.
 */
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import { PYTHON_EXTENSION_ID, PythonApiLike, interpreterFromPythonApi } from './pythonInterpreter';
import {
  ServerCommand,
  installCommand,
  notFoundMessage,
  notImportableMessage,
  probeCommand,
  resolveServerCommand,
  shellQuote,
  startFailedMessage,
} from './serverCommand';
import { allowedServerSettings, allowedValue, mayUseWorkspaceInterpreter } from './trust';

/** The client command hover links run (mlirtext/analysis/op_hover.py names it too). */
export const SHOW_PIPELINE_COMMAND = 'mlirtext.showPipeline';

/** Importing mlirtext on a loaded machine can take a few seconds; past this it is taken as broken. */
const PROBE_TIMEOUT_MS = 30_000;

export type ServerState = 'disabled' | 'starting' | 'running' | 'failed' | 'stopped';

export class MlirServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private _state: ServerState = 'stopped';
  private _failure: string | undefined;
  private starting: Promise<void> | undefined;
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();
  /** Fires on each change of `state` (the status-bar item follows it). */
  readonly onDidChangeState = this.stateChanged.event;

  constructor(private readonly log: vscode.OutputChannel) {}

  get state(): ServerState {
    return this._state;
  }

  /** Why the server is not running, when `state` is 'failed'. */
  get failure(): string | undefined {
    return this._failure;
  }

  /** The server's output channel, brought to the front. */
  showLog(): void {
    this.log.show(true);
  }

  private setState(state: ServerState): void {
    if (state !== this._state) {
      this._state = state;
      this.stateChanged.fire(state);
    }
  }

  /** The running client, or undefined after telling the user why there is none. */
  async require(what: string): Promise<LanguageClient | undefined> {
    if (this.starting) {
      await this.starting;
    }
    if (this.client && this._state === 'running') {
      return this.client;
    }
    const why =
      this._state === 'disabled'
        ? 'the language server is turned off (setting mlirtext.server.enabled); highlighting still works'
        : this._failure ?? 'the language server is not running (see the "mlirtext language server" output)';
    const choice = await vscode.window.showErrorMessage(`mlirtext: cannot ${what}: ${why}`, 'Open Settings', 'Show Log');
    if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'mlirtext.server');
    } else if (choice === 'Show Log') {
      this.log.show(true);
    }
    return undefined;
  }

  /** The running client once the start is over, or undefined, without telling the user (for work in the background). */
  async ready(): Promise<LanguageClient | undefined> {
    if (this.starting) {
      await this.starting;
    }
    return this.client && this._state === 'running' ? this.client : undefined;
  }

  start(): Promise<void> {
    this.starting = this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.setState('stopped');
    if (client) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.log.appendLine(`[client] stopping the server: ${String(e)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop().finally(() => this.stateChanged.dispose());
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration('mlirtext.server');
    if (!config.get<boolean>('enabled', true)) {
      this.setState('disabled');
      this.log.appendLine('[client] mlirtext.server.enabled is false: highlighting only, no language server');
      return;
    }
    this._failure = undefined;
    this.setState('starting');
    // In restricted mode only the user's own settings and PATH choose the program (src/trust.ts).
    const trusted = vscode.workspace.isTrusted;
    const settings = allowedServerSettings(
      trusted,
      { path: config.get<string>('path', ''), args: config.get<string[]>('args', []) },
      config.inspect<string>('path'),
      config.inspect<string[]>('args'),
    );
    const server = resolveServerCommand(
      settings,
      mayUseWorkspaceInterpreter(trusted) ? await selectedPythonInterpreter(this.log) : undefined,
    );
    if (!trusted) {
      this.log.appendLine('[client] restricted mode: the server command comes from user settings or PATH only');
    }
    this.log.appendLine(`[client] server command (${server.source}): ${shellQuote([server.command, ...server.args])}`);
    const problem = await this.probe(server);
    if (problem) {
      this.fail(problem, server);
      return;
    }
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      // No `transport`: the library would append `--stdio`, which `mlirtext lsp` does not take (stdio is its only mode).
      options: { env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const mlirtext = vscode.workspace.getConfiguration('mlirtext');
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ language: 'mlir' }],
      // The `mlirtext.dialects` setting: IRDL files the server registers before reading any document;
      // `mlirtext.cluster`: the Ray cluster whose devices Run Function offers (the user's own in restricted mode).
      initializationOptions: {
        dialects: mlirtext.get<string[]>('dialects', []),
        cluster: allowedValue(trusted, mlirtext.get<string>('cluster', ''), mlirtext.inspect<string>('cluster')),
      },
      // ... and sends the `mlirtext` section again when it changes (workspace/didChangeConfiguration).
      synchronize: { configurationSection: 'mlirtext' },
      // Hover on an op links to the pipeline view at the op (a `command:` link): the server's
      // Markdown may run that command, and no other.
      markdown: { isTrusted: { enabledCommands: [SHOW_PIPELINE_COMMAND] } },
      outputChannel: this.log,
      traceOutputChannel: this.log,
      // A crash restarts the server a few times (the library's default); after that the log says why.
    };
    const client = new LanguageClient('mlirtext', 'mlirtext language server', serverOptions, clientOptions);
    // After the start, the client's own changes: a crash restarts it (starting, then running again);
    // past the library's few restarts it stays stopped. Our own stop() drops the client first.
    client.onDidChangeState(({ newState }) => {
      if (this.client !== client) {
        return;
      }
      if (newState === State.Running) {
        this.setState('running');
      } else if (newState === State.Starting) {
        this.setState('starting');
      } else {
        this._failure = 'the language server stopped (see the "mlirtext language server" output)';
        this.setState('failed');
      }
    });
    try {
      await client.start();
      this.client = client;
      this.setState('running');
      this.log.appendLine('[client] language server running');
    } catch (e) {
      this.fail(startFailedMessage(server, e instanceof Error ? e.message : String(e)), server);
    }
  }

  /** undefined when the server can start; else the message that says why not and how to fix it. */
  private probe(server: ServerCommand): Promise<string | undefined> {
    const probe = probeCommand(server);
    if (!probe) {
      return Promise.resolve(undefined); // a console script: its own start error is the message
    }
    return new Promise((resolve) => {
      execFile(probe.command, probe.args, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
        if (!error) {
          resolve(undefined);
        } else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          resolve(notFoundMessage(server, `${probe.command}: not found`));
        } else if (error.killed) {
          resolve(`mlirtext language server: '${shellQuote([probe.command, ...probe.args])}' did not finish in ${PROBE_TIMEOUT_MS / 1000} s`);
        } else {
          resolve(notImportableMessage(server, String(stderr)));
        }
      });
    });
  }

  private fail(message: string, server: ServerCommand): void {
    this._failure = message;
    this.setState('failed');
    this.log.appendLine(`[client] ${message}`);
    const install = installCommand(server);
    void vscode.window.showErrorMessage(message, 'Copy Install Command', 'Open Settings', 'Show Log').then((choice) => {
      if (choice === 'Copy Install Command') {
        void vscode.env.clipboard.writeText(install);
      } else if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'mlirtext.server');
      } else if (choice === 'Show Log') {
        this.log.show(true);
      }
    });
  }
}

/** The Python extension's interpreter for the active file, when that extension is installed. */
async function selectedPythonInterpreter(log: vscode.OutputChannel): Promise<string[] | undefined> {
  const extension = vscode.extensions.getExtension<PythonApiLike>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return await interpreterFromPythonApi(api, vscode.window.activeTextEditor?.document.uri);
  } catch (e) {
    log.appendLine(`[client] the Python extension did not give an interpreter: ${String(e)}`);
    return undefined;
  }
}
