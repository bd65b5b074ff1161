/**
 * Show graph: the function under the cursor as a data-flow graph in a webview beside the
 * editor, linked both ways (the cursor selects the node; a click on a node selects the op),
 * at any level, two levels side by side, with dispatch and profile overlays.
 *
 * The server answers twice: the graph at once, then the same graph with the dispatches formed
 * (seconds on a large function), which the view folds in for the dispatch overlay. The second
 * is asked once ELK has laid out the first section (or after DISPATCHES_AFTER_MS): forming the
 * dispatches takes the CPU the view's first layout needs.
 *
 * The page's HTML is set, then the server asked at once; the page's files are in it (nothing for
 * it to load but ELK's worker), and the graph is posted as soon as the server answers: VS Code
 * holds messages for a page still loading and hands them over with its load. A shown view is reused for the
 * next function (its page, its ELK worker): only the first Show Graph pays for the page's load.
 * The time from the command to the first nodes drawn is logged, with where it went.
 */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { GraphDivergence, graphDivergenceOf } from '../graph/marks';
import { GraphResult } from '../graph/model';
import { PageAssets, graphCommandArguments, renderGraphPage } from '../graph/page';
import { BisectResult } from '../debugging/results';
import { executeServerCommand, serverUri } from '../protocol';
import { MlirServer } from '../serverProcess';
import { activeMlirEditor, targetFunction } from './target';

export const GRAPH_SERVER_COMMAND = 'mlirtext.graph';
/** The longest the dispatches wait for ELK to lay out the graph's first section. */
const DISPATCHES_AFTER_MS = 3000;

type ViewMessage =
  | { type: 'ready' }
  | { type: 'drawn' }
  | { type: 'laidOut' }
  | { type: 'levels'; levels: string[] }
  | { type: 'reveal'; range: number[] }
  | { type: 'profile' }
  | { type: 'timeline'; text: string };

export class GraphView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private document: vscode.TextDocument | undefined;
  private fnName: string | undefined;
  private levels: string[] = ['source'];
  private profile: string | null = null;
  /** Whether the page has said it is ready (a page being loaded is not reused: its HTML is set again). */
  private viewReady = false;
  /** The page's own files (read once). */
  private assets: Promise<PageAssets> | undefined;
  /** The latest request: answers to older ones are dropped. */
  private current: symbol | undefined;
  private cursorTimer: NodeJS.Timeout | undefined;
  /** Called when the view says ELK has laid out the latest graph's first section. */
  private onLaidOut: (() => void) | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The last bisect's marks of each function (`uri#fn`), while its document's text is `text`. */
  private readonly divergences = new Map<string, { text: string; marks: GraphDivergence }>();
  /** The open time of the latest Show Graph: when the command came, when the page said it was
   * ready, and the extension's steps in between (ms after the command, for the page's timeline). */
  private opening: { fn: string; at: number; readyMs: number | null; marks: Record<string, number> } | undefined;

  constructor(private readonly extensionUri: vscode.Uri, private readonly server: MlirServer,
    private readonly log?: vscode.OutputChannel) {
    this.subscriptions.push(
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (this.panel && e.textEditor.document === this.document) {
          // A burst of cursor moves (a held arrow key) selects the node once, where it stops.
          clearTimeout(this.cursorTimer);
          const at = e.selections[0].active;
          this.cursorTimer = setTimeout(() => this.post({ type: 'cursor', line: at.line, character: at.character }), 80);
        }
      }),
    );
  }

  async show(fnName?: string): Promise<GraphResult | undefined> {
    const invoked = Date.now();
    const editor = activeMlirEditor();
    if (!editor) return undefined;
    const fn = await targetFunction(editor, fnName);
    if (!fn) return undefined;
    this.document = editor.document;
    this.fnName = fn.name;
    this.levels = ['source'];
    const file = path.basename(editor.document.fileName);
    const reused = this.panel !== undefined && this.viewReady;
    const panel = this.ensurePanel();
    panel.title = `Graph @${fn.name}`;
    this.opening = { fn: fn.name, at: invoked, readyMs: reused ? 0 : null, marks: { panel: Date.now() - invoked } };
    if (reused) {
      // The page and its ELK worker are kept: it only forgets the last graph.
      this.post({ type: 'reset', fn: fn.name, file });
    } else {
      this.viewReady = false;
      // (a message posted before a page's HTML is set is dropped when it is set: the HTML first)
      const html = await this.page(panel, fn.name, file);
      if (this.opening?.at !== invoked || this.panel !== panel) return undefined;   // (another Show Graph meanwhile, or closed)
      panel.webview.html = html;
      this.markOpening('HTML set');
    }
    panel.reveal(vscode.ViewColumn.Beside, true);
    const at = editor.selection.active;
    const result = await this.request();
    this.post({ type: 'divergence', marks: this.marksOf(editor.document, fn.name) });
    this.post({ type: 'cursor', line: at.line, character: at.character });
    return result;
  }

  /** A bisect's answer for @fn of `document`: its ops (or dispatch) marked in the function's graph. */
  markDivergence(document: vscode.TextDocument, fn: string, result: BisectResult): void {
    const key = `${document.uri.toString()}#${fn}`;
    const marks = graphDivergenceOf(result);
    if (marks) this.divergences.set(key, { text: document.getText(), marks });
    else this.divergences.delete(key);
    if (this.panel && this.document === document && this.fnName === fn) {
      this.post({ type: 'divergence', marks: marks ?? null });
    }
  }

  /** The marks of @fn's last bisect, unless the text changed since (they would be misplaced; a
   * version number starts again when a file is closed and opened). */
  private marksOf(document: vscode.TextDocument, fn: string): GraphDivergence | null {
    const found = this.divergences.get(`${document.uri.toString()}#${fn}`);
    return found && found.text === document.getText() ? found.marks : null;
  }

  /** The first nodes are drawn: the time from the command, logged and shown to the view (the e2e reads it). */
  private opened(): void {
    const opening = this.opening;
    this.opening = undefined;
    if (!opening) return;
    const commandMs = Date.now() - opening.at;
    this.log?.appendLine(`[graph] @${opening.fn}: first nodes ${commandMs} ms after the command` +
      (opening.readyMs ? ` (the page ready after ${opening.readyMs} ms)` : opening.readyMs === 0 ? ' (the page reused)' : ''));
    this.post({ type: 'opened', commandMs, readyMs: opening.readyMs, commandAt: opening.at, extensionMarks: opening.marks });
  }

  /** A step of the open under way, timed from the command (once: a later request is no opening). */
  private markOpening(step: string): void {
    if (this.opening && this.opening.marks[step] === undefined) this.opening.marks[step] = Date.now() - this.opening.at;
  }

  /** The graph at `this.levels`, then with its dispatches; each posted to the view as it comes. */
  private async request(): Promise<GraphResult | undefined> {
    const client = await this.server.require('show the graph');
    if (!client || !this.document || !this.fnName) return undefined;
    const shown = Symbol(this.fnName);
    this.current = shown;
    const uri = serverUri(client, this.document);
    const ask = (dispatches: boolean) =>
      executeServerCommand<GraphResult | null>(client, GRAPH_SERVER_COMMAND,
        graphCommandArguments(uri, this.fnName!, this.levels, this.profile, dispatches))
        .catch((e) => ({ error: String(e) }) as GraphResult)
        .then((r) => r ?? { error: 'the server did not answer (see its log)' });
    const asked = Date.now();
    this.markOpening('server asked');
    const laidOut = new Promise<void>((resolve) => {
      this.onLaidOut = resolve;
      setTimeout(resolve, DISPATCHES_AFTER_MS);
    });
    const graph = await ask(false);
    this.markOpening('server answered');
    if (this.current !== shown) return graph;
    // (serverMs: from the request to the answer here, for the e2e's account of the open time)
    this.post({ type: 'graph', result: graph, serverMs: Date.now() - asked });
    if (!graph.error) {
      void laidOut.then(() => ask(true)).then((withDispatches) => {
        if (this.current === shown) this.post({ type: 'dispatches', result: withDispatches });
      });
    }
    return graph;
  }

  /** A message to the page, at once: one posted while it loads is handed to it with its load. */
  private post(message: unknown): void {
    if (this.panel) void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
    clearTimeout(this.cursorTimer);
    this.subscriptions.forEach((s) => s.dispose());
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel) return this.panel;
    const panel = vscode.window.createWebviewPanel('mlirtext.graph', 'Graph', vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: true,
      // (ELK's worker and its whole; the page's other files are in it)
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media', 'graph')],
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.viewReady = false;
    });
    panel.webview.onDidReceiveMessage((m: ViewMessage) => {
      if (m.type === 'ready') {
        this.viewReady = true;
        if (this.opening && this.opening.readyMs === null) this.opening.readyMs = Date.now() - this.opening.at;
        this.markOpening('ready received');
      } else if (m.type === 'drawn') {
        this.opened();
      } else if (m.type === 'laidOut') {
        this.onLaidOut?.();
      } else if (m.type === 'levels') {
        this.levels = m.levels;
        void this.request();
      } else if (m.type === 'reveal') {
        void this.reveal(m.range);
      } else if (m.type === 'profile') {
        void this.pickProfile();
      } else if (m.type === 'timeline') {
        this.log?.appendLine(`[graph] @${this.fnName}: the open's timeline, ms after the command: ${m.text}`);
      }
    });
    this.panel = panel;
    return panel;
  }

  private async page(panel: vscode.WebviewPanel, fn: string, file: string): Promise<string> {
    const uri = (...parts: string[]) => panel.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...parts)).toString();
    return renderGraphPage({
      fn,
      file,
      cspSource: panel.webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      assets: await this.pageAssets(),
      elkWorkerUri: uri('media', 'graph', 'elk-worker.min.js'),
      elkBundledUri: uri('media', 'graph', 'elk.bundled.js'),
    });
  }

  private pageAssets(): Promise<PageAssets> {
    const read = async (...parts: string[]) =>
      new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(this.extensionUri, ...parts)));
    this.assets ??= Promise.all([
      read('media', 'graph', 'graph.css'),
      read('out', 'src', 'graph', 'model.js'),
      read('out', 'src', 'graph', 'marks.js'),
      read('media', 'graph', 'elk-api.js'),
      read('media', 'graph', 'graph.js'),
    ]).then(([style, model, marks, elkApi, script]) => ({ style, model, marks, elkApi, script }));
    return this.assets;
  }

  /** A clicked node: select its op (or the source op it came from) in the editor. */
  private async reveal(range: number[]): Promise<void> {
    if (!this.document || range.length !== 4) return;
    const editor = await vscode.window.showTextDocument(this.document, { viewColumn: vscode.ViewColumn.One, preserveFocus: true });
    const selection = new vscode.Selection(range[0], range[1], range[2], range[3]);
    editor.selection = selection;
    editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** A dispatch trace (`mlirtext run --trace-dispatches DIR` wrote DIR/dispatches.json) for the time overlay. */
  private async pickProfile(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      openLabel: 'Use this trace',
      filters: { 'Dispatch trace': ['json'] },
      title: 'dispatches.json of `mlirtext run --trace-dispatches DIR`',
    });
    if (!picked?.length) return;
    this.profile = path.dirname(picked[0].fsPath);
    await this.request();
  }
}
