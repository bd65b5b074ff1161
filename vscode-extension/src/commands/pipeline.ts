/** Show pipeline: one webview panel with the function under the cursor at every level. */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { DeviceRunsResult, runDevicesCommandArguments } from '../devices';
import { UNTRUSTED_RUN_MESSAGE } from '../trust';
import { definedValues, definitionLine, findFunctions } from '../functions';
import { BisectResult } from '../debugging/results';
import { Divergence, DispatchDivergence, dispatchDivergenceOf, divergenceOf } from '../pipeline/divergence';
import { PipelineResult, ProfileResult, TargetCodeResult } from '../pipeline/model';
import { renderProfile } from '../pipeline/profile';
import { ProfileLenses } from '../profileLens';
import { RenderContext, renderDeviceRuns, renderMessage, renderPipeline, renderTargets } from '../pipeline/render';
import { executeServerCommand, serverUri } from '../protocol';
import { pipelineCommandArguments } from '../runInputs';
import { MlirServer } from '../serverProcess';
import { activeMlirEditor, targetFunction } from './target';

export const PIPELINE_SERVER_COMMAND = 'mlirtext.pipeline';
export const RUN_DEVICES_SERVER_COMMAND = 'mlirtext.runDevices';
export const TARGET_CODE_SERVER_COMMAND = 'mlirtext.targetCode';
export const PROFILE_SERVER_COMMAND = 'mlirtext.profile';

/** What media/pipeline.js posts: it is ready for messages, or an op was clicked. */
type ViewMessage =
  | { type: 'ready' }
  | {
      type: 'reveal';
      source: boolean;
      defs: string[];
      /** The document line (0-based) of the clicked op's source op, when the server knew it. */
      origin?: number;
      text?: string;
    };

export class PipelineView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private document: vscode.TextDocument | undefined;
  private fnName: string | undefined;
  /** The device runs of the view now shown, once they are done, and whether its script listens yet. */
  private devices: DeviceRunsResult | undefined;
  /** The target column's answer, once it is there (it is asked for after the levels). */
  private targets: TargetCodeResult | undefined;
  /** The profile of the function's run, once it is done (after the device runs). */
  private profile: ProfileResult | undefined;
  private viewReady = false;
  /** The document line whose op the view marks at every level when it is ready (from hover's link). */
  private marked: number | undefined;
  /** The version of the document the view shows. */
  private shownVersion: number | undefined;
  /** The show() whose answers the view waits for (a newer one makes older answers stale). */
  private current: symbol | undefined;
  /** The levels shown (the view is rendered again from them when a bisect marks a pass). */
  private pipeline: PipelineResult | undefined;
  /** Per `uri#function`, where its last bisect found the numbers diverging (a pass, a device's dispatch), for that version of the document. */
  private readonly divergences = new Map<string, { version: number; divergence?: Divergence; dispatch?: DispatchDivergence }>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: MlirServer,
    private readonly lenses?: ProfileLenses,
  ) {}

  /**
   * The view of `fnName` (else the function at the cursor). `line`: a document line (0-based) whose op
   * is marked at every level once they show (hover's link passes it); `documentUri`: the document,
   * when it is not the active editor's (a hover in an editor that does not have the focus).
   */
  async show(fnName?: string, line?: number, documentUri?: string): Promise<PipelineResult | undefined> {
    if (documentUri && vscode.window.activeTextEditor?.document.uri.toString() !== documentUri) {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === documentUri);
      const shown = vscode.window.visibleTextEditors.find((e) => e.document === document);
      if (document) {
        await vscode.window.showTextDocument(document, { viewColumn: shown?.viewColumn, preserveFocus: false });
      }
    }
    const editor = activeMlirEditor();
    if (!editor) {
      return undefined;
    }
    const fn = await targetFunction(editor, fnName);
    if (!fn) {
      return undefined;
    }
    const marked = typeof line === 'number' && line >= fn.line && line <= fn.endLine ? line : undefined;
    // Another op of the function the view shows, unedited since (hover's link): mark it, compute nothing again.
    if (marked !== undefined && this.panel && this.pipeline && this.document === editor.document
      && this.fnName === fn.name && this.shownVersion === editor.document.version) {
      this.marked = marked;
      this.panel.reveal(vscode.ViewColumn.Beside, true);
      if (this.viewReady) {
        void this.panel.webview.postMessage({ type: 'mark', origin: marked });
      }
      return this.pipeline;
    }
    const client = await this.server.require('show the pipeline');
    if (!client) {
      return undefined;
    }
    this.document = editor.document;
    this.fnName = fn.name;
    this.shownVersion = editor.document.version;
    this.marked = marked;
    this.pipeline = undefined;
    const panel = this.ensurePanel();
    panel.title = `Pipeline @${fn.name}`;
    panel.webview.html = renderMessage(`@${fn.name}`, 'Lowering through every level…', this.context(panel));
    panel.reveal(vscode.ViewColumn.Beside, true);
    const uri = serverUri(client, editor.document);
    // Both run on the server's work pool side by side. The levels are the view: they show as
    // soon as they are done; the device runs (a compile, then timed calls) join them when ready.
    this.devices = undefined;
    this.targets = undefined;
    this.viewReady = false;
    const shown = Symbol(fn.name);
    this.current = shown;
    // In restricted mode the levels and targets show; the device runs (native code) do not.
    const deviceRuns = vscode.workspace.isTrusted
      ? executeServerCommand<DeviceRunsResult | null>(client, RUN_DEVICES_SERVER_COMMAND,
          runDevicesCommandArguments(uri, fn.name, undefined))
      : Promise.resolve<DeviceRunsResult>({ error: UNTRUSTED_RUN_MESSAGE });
    this.profile = undefined;
    const document = editor.document;
    void deviceRuns
      .catch((e) => ({ error: String(e) }))
      .then((devices) => {
        if (this.current === shown) {
          this.devices = devices ?? { error: 'the server did not answer (see its log)' };
          this.postDevices();
        }
        // The profile after the device runs (both time native code: one at a time).
        return vscode.workspace.isTrusted
          ? executeServerCommand<ProfileResult | null>(client, PROFILE_SERVER_COMMAND, [uri, fn.name, null, 0, 'local-task'])
          : Promise.resolve<ProfileResult>({ error: UNTRUSTED_RUN_MESSAGE });
      })
      .catch((e) => ({ error: String(e) }))
      .then((profile) => {
        if (this.current === shown) {
          this.profile = profile ?? { error: 'the server did not answer (see its log)' };
          this.lenses?.set(document, this.profile);
          this.postProfile();
        }
      });
    // The levels without the targets (compiling for every target takes seconds); the target
    // column is asked for once the levels are there, and fills in when it comes.
    const pipeline = await executeServerCommand<PipelineResult | null>(
      client,
      PIPELINE_SERVER_COMMAND,
      pipelineCommandArguments(uri, fn.name, undefined, []),
    );
    if (this.panel !== panel || this.current !== shown) {
      return pipeline ?? undefined; // closed meanwhile
    }
    if (!pipeline || (!pipeline.levels?.length && pipeline.error)) {
      panel.webview.html = renderMessage(`@${fn.name}`, pipeline?.error ?? 'The server did not answer (see its log).', this.context(panel));
      return pipeline ?? undefined;
    }
    this.pipeline = pipeline;
    this.render(panel);
    void executeServerCommand<TargetCodeResult | null>(
      client,
      TARGET_CODE_SERVER_COMMAND,
      pipelineCommandArguments(uri, fn.name, undefined, null),
    )
      .catch((e) => ({ error: String(e) }))
      .then((targets) => {
        if (this.current === shown) {
          this.targets = targets ?? { error: 'the server did not answer (see its log)' };
          this.postTargets();
        }
      });
    return pipeline;
  }

  /**
   * Where "Find where @f's numbers diverge" found them diverging (`result` without a `kind` nor a
   * `dispatch`: nothing to blame, the marks go): marked on the guilty pass and its level, and on the
   * dispatch a device got wrong, now, when the view shows that function, or when it is opened for it
   * (unless the document changed meanwhile).
   */
  markDivergence(document: vscode.TextDocument, fnName: string, result: BisectResult): void {
    const key = `${document.uri.toString()}#${fnName}`;
    const divergence = divergenceOf(result);
    const dispatch = dispatchDivergenceOf(result);
    if (divergence || dispatch) {
      this.divergences.set(key, { version: document.version, divergence, dispatch });
    } else {
      this.divergences.delete(key);
    }
    if (this.panel && this.pipeline && this.document === document && this.fnName === fnName) {
      this.render(this.panel);
    }
  }

  /** The marks of the function shown, when its last bisect was of this version of the document. */
  private marks(): { divergence?: Divergence; dispatch?: DispatchDivergence } {
    if (!this.document || !this.fnName) {
      return {};
    }
    const mark = this.divergences.get(`${this.document.uri.toString()}#${this.fnName}`);
    return mark && mark.version === this.document.version ? mark : {};
  }

  /** The levels into the panel with what has come so far; the rest is posted once its script is ready. */
  private render(panel: vscode.WebviewPanel): void {
    if (!this.pipeline || !this.document) {
      return;
    }
    this.viewReady = false;
    panel.webview.html = renderPipeline(this.pipeline, {
      ...this.context(panel),
      fn: this.fnName,
      file: path.basename(this.document.fileName),
      devices: this.devices,
      profile: this.profile,
      targets: this.targets ?? 'pending',
      divergence: this.marks().divergence,
      dispatch: this.marks().dispatch,
    });
  }

  /** The target column into the shown view, once both it and the view's script are there. */
  private postTargets(): void {
    if (this.panel && this.viewReady && this.targets) {
      void this.panel.webview.postMessage({ type: 'targets', html: renderTargets(this.targets) });
    }
  }

  /** The profile into the shown view, once both it and the view's script are there. */
  private postProfile(): void {
    if (this.panel && this.viewReady && this.profile) {
      void this.panel.webview.postMessage({ type: 'profile', html: renderProfile(this.profile, this.marks().dispatch) });
    }
  }

  /** The device runs into the shown view, once both they and the view's script are there. */
  private postDevices(): void {
    if (this.panel && this.viewReady && this.devices) {
      void this.panel.webview.postMessage({ type: 'devices', html: renderDeviceRuns(this.devices) });
    }
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
    panel.webview.onDidReceiveMessage((m: ViewMessage) => {
      if (m.type === 'ready') {
        this.viewReady = true;
        if (this.marked !== undefined && this.pipeline) {
          void panel.webview.postMessage({ type: 'mark', origin: this.marked });
        }
        this.postDevices();
        this.postTargets();
        this.postProfile();
      } else if (m.type === 'reveal') {
        void this.reveal(m);
      }
    });
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
  private async reveal(message: Extract<ViewMessage, { type: 'reveal' }>): Promise<void> {
    if (!this.document || !this.fnName) {
      return;
    }
    const text = this.document.getText();
    const fn = findFunctions(text).find((f) => f.name === this.fnName);
    if (!fn) {
      return;
    }
    const lines = text.split(/\r?\n/);
    // The op's source position, as lowering kept it; else (an op made from nothing in the
    // source) a named value it defines. The source level keeps every name as written.
    let line: number | undefined = message.origin;
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
