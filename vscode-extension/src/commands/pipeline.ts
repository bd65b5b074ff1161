/** Show pipeline: one webview panel with the function under the cursor at every level. */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { definedValues, definitionLine, findFunctions } from '../functions';
import { PipelineResult } from '../pipeline/model';
import { RenderContext, renderMessage, renderPipeline } from '../pipeline/render';
import { executeServerCommand, serverUri } from '../protocol';
import { RunResult, pipelineCommandArguments, runCommandArguments } from '../runInputs';
import { MlirServer } from '../serverProcess';
import { activeMlirEditor, targetFunction } from './target';

export const PIPELINE_SERVER_COMMAND = 'mlirtext.pipeline';

/** Clicks in the view, as media/pipeline.js posts them. */
interface RevealMessage {
  type: 'reveal';
  source: boolean;
  defs: string[];
  loc?: string;
  text?: string;
}

export class PipelineView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private document: vscode.TextDocument | undefined;
  private fnName: string | undefined;

  constructor(private readonly extensionUri: vscode.Uri, private readonly server: MlirServer) {}

  async show(fnName?: string): Promise<PipelineResult | undefined> {
    const editor = activeMlirEditor();
    if (!editor) {
      return undefined;
    }
    const fn = await targetFunction(editor, fnName);
    if (!fn) {
      return undefined;
    }
    const client = await this.server.require('show the pipeline');
    if (!client) {
      return undefined;
    }
    this.document = editor.document;
    this.fnName = fn.name;
    const panel = this.ensurePanel();
    panel.title = `Pipeline @${fn.name}`;
    panel.webview.html = renderMessage(`@${fn.name}`, 'Lowering through every level…', this.context(panel));
    panel.reveal(vscode.ViewColumn.Beside, true);
    const uri = serverUri(client, editor.document);
    // Both run on the server's work pool side by side; the run is a bonus, the pipeline is the view.
    const [pipeline, run] = await Promise.all([
      executeServerCommand<PipelineResult | null>(client, PIPELINE_SERVER_COMMAND, pipelineCommandArguments(uri, fn.name)),
      executeServerCommand<RunResult | null>(client, 'mlirtext.run', runCommandArguments(uri, fn.name, undefined)).catch(
        (e) => ({ error: String(e) }) as RunResult,
      ),
    ]);
    if (this.panel !== panel) {
      return pipeline ?? undefined; // closed meanwhile
    }
    if (!pipeline || (!pipeline.levels?.length && pipeline.error)) {
      panel.webview.html = renderMessage(`@${fn.name}`, pipeline?.error ?? 'The server did not answer (see its log).', this.context(panel));
      return pipeline ?? undefined;
    }
    panel.webview.html = renderPipeline(pipeline, {
      ...this.context(panel),
      fn: fn.name,
      file: path.basename(editor.document.fileName),
      run: run ?? undefined,
    });
    return pipeline;
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel) {
      return this.panel;
    }
    const panel = vscode.window.createWebviewPanel('mlirtext.pipeline', 'Pipeline', vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')],
    });
    panel.onDidDispose(() => (this.panel = undefined));
    panel.webview.onDidReceiveMessage((m: RevealMessage) => this.reveal(m));
    this.panel = panel;
    return panel;
  }

  private context(panel: vscode.WebviewPanel): RenderContext {
    const media = (file: string) => panel.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', file)).toString();
    return {
      file: '',
      cspSource: panel.webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      styleUri: media('pipeline.css'),
      scriptUri: media('pipeline.js'),
    };
  }

  /** A clicked op: show where it is defined in the source document, when names or locations say. */
  private async reveal(message: RevealMessage): Promise<void> {
    if (message.type !== 'reveal' || !this.document || !this.fnName) {
      return;
    }
    const text = this.document.getText();
    const fn = findFunctions(text).find((f) => f.name === this.fnName);
    if (!fn) {
      return;
    }
    const lines = text.split(/\r?\n/);
    let line: number | undefined;
    if (message.loc) {
      line = Number(message.loc.split(':')[0]) - 1;
    }
    // The source level keeps every name as written; lower levels only keep named values.
    const names = message.source && message.text ? definedValues(message.text) : message.defs;
    for (const name of names) {
      line ??= definitionLine(lines, fn, name);
    }
    if (line === undefined || line < 0) {
      return;
    }
    const editor = await vscode.window.showTextDocument(this.document, { viewColumn: vscode.ViewColumn.One, preserveFocus: true });
    const range = new vscode.Range(line, 0, line, lines[line]?.length ?? 0);
    editor.selection = new vscode.Selection(range.start, range.end);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
}
