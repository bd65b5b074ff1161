/**
 * "Find where @f's numbers diverge" (the server's `mlirtext.bisect` on the function at the cursor,
 * with its last run's inputs) puts a marker on each op to blame, with the pass in its message and a
 * link to the repro; "Reduce this failure" (`mlirtext.reduce`) opens the smallest module the
 * function's lowering still crashes on. The server offers both as code actions.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { executeServerCommand, serverUri } from '../protocol';
import { MlirServer } from '../serverProcess';
import { runTarget } from '../commands/target';
import {
  BisectResult,
  Marker,
  ReduceResult,
  bisectArguments,
  describeFinding,
  deviceNames,
  faultFlags,
  lastInputs,
  reduceArguments,
} from './results';

export const BISECT_SERVER_COMMAND = 'mlirtext.bisect';
export const REDUCE_SERVER_COMMAND = 'mlirtext.reduce';

export class DebuggingCommands implements vscode.Disposable {
  private readonly markers = vscode.languages.createDiagnosticCollection('mlirtext bisect');
  private lastRepro: string | undefined;

  /** `onBisect`: told of each bisect's answer (the pipeline view marks the guilty pass). */
  constructor(
    private readonly server: MlirServer,
    private readonly onBisect?: (document: vscode.TextDocument, fn: string, result: BisectResult) => void,
  ) {}

  dispose(): void {
    this.markers.dispose();
  }

  /** `inputs`/`faults` given skip the last run's inputs and the `mlirtext.debug.faults` setting. */
  async findDivergence(fnName?: string, inputs?: string[], faults?: string[]): Promise<BisectResult | undefined> {
    const target = await this.target(fnName, 'find where the numbers diverge');
    if (!target) {
      return undefined;
    }
    const { editor, name, client } = target;
    const given = inputs ?? lastInputs.of(editor.document.uri.toString(), name);
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Finding where @${name}'s numbers diverge` },
      () =>
        executeServerCommand<BisectResult | null>(
          client,
          BISECT_SERVER_COMMAND,
          bisectArguments(serverUri(client, editor.document), name, given, faults ?? configuredFaults(), configuredDevices()),
        ),
    );
    const result: BisectResult = answer ?? { error: 'the server did not answer (see its log)' };
    if (result.error) {
      void vscode.window.showErrorMessage(`mlirtext: @${name}: ${result.error}`);
      return result;
    }
    this.lastRepro = result.repro;
    this.onBisect?.(editor.document, name, result);
    this.markers.set(editor.document.uri, (result.markers ?? []).map((m) => diagnosticOf(m, result.repro)));
    if (!result.kind && !result.dispatch) {
      void vscode.window.showInformationMessage(`mlirtext: @${name}: ${describeFinding(result)}`);
      return result;
    }
    const choices = [...(result.repro ? ['Open Repro'] : []), ...(result.crashed ? ['Reduce This Failure'] : [])];
    void vscode.window.showWarningMessage(`mlirtext: @${name}: ${describeFinding(result)}`, ...choices).then((choice) => {
      if (choice === 'Open Repro') {
        void this.openRepro(result.repro);
      } else if (choice === 'Reduce This Failure') {
        void this.reduceFailure(name);
      }
    });
    return result;
  }

  async reduceFailure(fnName?: string, faults?: string[]): Promise<ReduceResult | undefined> {
    const target = await this.target(fnName, 'reduce a failure');
    if (!target) {
      return undefined;
    }
    const { editor, name, client } = target;
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Reducing @${name}'s crash`, cancellable: false },
      () =>
        executeServerCommand<ReduceResult | null>(
          client,
          REDUCE_SERVER_COMMAND,
          reduceArguments(serverUri(client, editor.document), name, faults),
        ),
    );
    const result: ReduceResult = answer ?? { error: 'the server did not answer (see its log)' };
    if (result.error || result.path === undefined) {
      void vscode.window.showErrorMessage(`mlirtext: @${name}: ${result.error ?? 'no reduced module'}`);
      return result;
    }
    const reduced = await vscode.workspace.openTextDocument(vscode.Uri.file(result.path));
    await vscode.window.showTextDocument(reduced, { viewColumn: vscode.ViewColumn.Beside, preview: false });
    void vscode.window.showInformationMessage(`mlirtext: ${result.summary ?? ''}`);
    return result;
  }

  /** The repro's README (its last line is the command that shows the failure); default the last bisect's. */
  async openRepro(dir?: string): Promise<void> {
    const where = dir ?? this.lastRepro;
    if (!where) {
      void vscode.window.showWarningMessage('mlirtext: no repro yet: run "Find where the numbers diverge" first.');
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(where, 'README')), { preview: false });
  }

  private async target(fnName: string | undefined, what: string) {
    const target = await runTarget(this.server, fnName, what);
    return target ? { editor: target.editor, name: target.fn.name, client: target.client } : undefined;
  }
}

function configuredFaults(): string[] {
  return faultFlags(vscode.workspace.getConfiguration('mlirtext.debug').get('faults'));
}

function configuredDevices(): string[] {
  return deviceNames(vscode.workspace.getConfiguration('mlirtext.debug').get('devices'));
}

/** A marker as an error on the op's text, linked to the repro's README. */
function diagnosticOf(m: Marker, repro: string | undefined): vscode.Diagnostic {
  const range = new vscode.Range(m.start[0], m.start[1], m.end[0], m.end[1]);
  const d = new vscode.Diagnostic(range, `${m.op}: ${m.message}`, vscode.DiagnosticSeverity.Error);
  d.source = 'mlirtext bisect';
  if (repro) {
    d.code = { value: 'repro', target: vscode.Uri.file(path.join(repro, 'README')) };
  }
  return d;
}
