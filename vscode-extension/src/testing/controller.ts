/**
 * The Testing panel ("MLIR"): each `.mlir` file's tests as the server lists them
 * (`mlirtext.testItems`: the `// -----` chunks with expected-* annotations, the functions that
 * assert with check.expect_*), run by the server (`mlirtext.runTests`: a chunk as
 * --verify-diagnostics, a function as `mlirtext check`), failures shown at their line with the
 * expected and actual text side by side.
 *
 * Discovery: open documents at once and again after each edit (debounced); the workspace's other
 * `.mlir` files are listed by name and asked about when their node is expanded or run.
 */
import * as vscode from 'vscode';
import { executeServerCommand } from '../protocol';
import { MlirServer } from '../serverProcess';
import {
  Debouncer,
  ServerRange,
  ServerResult,
  checkedItems,
  checkedResults,
  failureMessage,
  idsToRun,
  serverIdOf,
  testId,
} from './model';

export const TEST_ITEMS_COMMAND = 'mlirtext.testItems';
export const RUN_TESTS_COMMAND = 'mlirtext.runTests';
/** How long typing pauses before an edited file's tests are listed again. */
const REFRESH_AFTER_EDIT_MS = 500;
/** As many workspace files as the server reads for workspace symbols. */
const MAX_WORKSPACE_FILES = 2000;

export class MlirTestController implements vscode.Disposable {
  private readonly controller = vscode.tests.createTestController('mlirtext', 'MLIR');
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly edits = new Debouncer(REFRESH_AFTER_EDIT_MS, (uri) => void this.refresh(vscode.Uri.parse(uri)));
  /** File items whose tests have been asked for (the others are listed by name only). */
  private readonly resolved = new Set<string>();

  constructor(private readonly server: MlirServer) {
    this.controller.resolveHandler = async (item) => {
      if (item) await this.refresh(item.uri!);
      else await this.discoverWorkspace();
    };
    this.controller.refreshHandler = () => this.refreshAll();
    this.controller.createRunProfile('Run', vscode.TestRunProfileKind.Run, (request, token) => this.run(request, token), true);
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.mlir');
    this.subscriptions.push(
      this.controller,
      this.edits,
      watcher,
      vscode.workspace.onDidOpenTextDocument((d) => this.isMlir(d) && void this.refresh(d.uri)),
      vscode.workspace.onDidChangeTextDocument((e) => this.isMlir(e.document) && this.edits.schedule(e.document.uri.toString())),
      watcher.onDidCreate((uri) => this.fileItem(uri)),
      watcher.onDidDelete((uri) => this.forget(uri)),
      // A file changed on disk that is not open: its tests again, if they were listed.
      watcher.onDidChange((uri) => {
        if (this.resolved.has(uri.toString()) && !this.openDocument(uri)) void this.refresh(uri);
      }),
    );
    for (const d of vscode.workspace.textDocuments) {
      if (this.isMlir(d)) void this.refresh(d.uri);
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }

  private isMlir(document: vscode.TextDocument): boolean {
    return document.languageId === 'mlir' && (document.uri.scheme === 'file' || document.uri.scheme === 'untitled');
  }

  private openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  }

  /** Every `.mlir` file of the workspace, by name (their tests come when expanded or run). */
  private async discoverWorkspace(): Promise<void> {
    const files = await vscode.workspace.findFiles('**/*.mlir', '**/{node_modules,.git}/**', MAX_WORKSPACE_FILES);
    for (const uri of files) this.fileItem(uri);
  }

  private async refreshAll(): Promise<void> {
    this.resolved.clear();
    await this.discoverWorkspace();
    const files: vscode.TestItem[] = [];
    this.controller.items.forEach((item) => void files.push(item));
    await Promise.all(files.map((f) => this.refresh(f.uri!)));
  }

  /** The file's node, made (unresolved) when new. */
  private fileItem(uri: vscode.Uri): vscode.TestItem {
    const id = uri.toString();
    let item = this.controller.items.get(id);
    if (!item) {
      item = this.controller.createTestItem(id, vscode.workspace.asRelativePath(uri), uri);
      item.canResolveChildren = true;
      this.controller.items.add(item);
    }
    return item;
  }

  private forget(uri: vscode.Uri): void {
    this.controller.items.delete(uri.toString());
    this.resolved.delete(uri.toString());
  }

  /** Ask the server for the file's tests; a file without any leaves the panel. */
  private async refresh(uri: vscode.Uri): Promise<vscode.TestItem | undefined> {
    const client = await this.server.ready();
    if (!client) return undefined;
    const file = this.fileItem(uri);
    file.busy = true;
    try {
      const answer = checkedItems(
        await executeServerCommand(client, TEST_ITEMS_COMMAND, [client.code2ProtocolConverter.asUri(uri)]),
      );
      this.resolved.add(uri.toString());
      file.error = answer.error ?? undefined;
      if (!answer.error && answer.items.length === 0) {
        this.forget(uri);
        return undefined;
      }
      file.children.replace(
        answer.items.map((s) => {
          const item = this.controller.createTestItem(testId(uri.toString(), s.id), s.label, uri);
          item.range = toRange(s.range);
          return item;
        }),
      );
      return file;
    } catch (e) {
      file.error = `mlirtext: could not list the tests: ${e instanceof Error ? e.message : String(e)}`;
      return file;
    } finally {
      file.busy = false;
    }
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const client = await this.server.require('run tests');
    if (!client) return;
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    // What each file runs: the whole file, or some of its tests.
    const asked = new Map<string, 'file' | string[]>();
    const roots: vscode.TestItem[] = [];
    if (request.include) {
      roots.push(...request.include);
    } else {
      await this.discoverWorkspace();
      this.controller.items.forEach((item) => void roots.push(item));
    }
    for (const item of roots) {
      if (excluded.has(item.id)) continue;
      const file = item.parent ?? item;
      const key = file.uri!.toString();
      const before = asked.get(key);
      if (!item.parent) {
        asked.set(key, 'file');
      } else if (before !== 'file') {
        asked.set(key, [...(before ?? []), serverIdOf(key, item.id)!]);
      }
    }
    const run = this.controller.createTestRun(request);
    try {
      for (const [key, what] of asked) {
        if (token.isCancellationRequested) break;
        const uri = vscode.Uri.parse(key);
        const file = this.resolved.has(key) ? this.controller.items.get(key) : await this.refresh(uri);
        if (!file) continue;
        const children: string[] = [];
        file.children.forEach((c) => void children.push(serverIdOf(key, c.id)!));
        const ids = idsToRun(children, what, new Set([...excluded].map((id) => serverIdOf(key, id) ?? id)));
        if (ids.length === 0) continue;
        const items = ids.map((id) => file.children.get(testId(key, id))!).filter(Boolean);
        for (const item of items) run.started(item);
        const answer = checkedResults(
          await executeServerCommand(client, RUN_TESTS_COMMAND, [client.code2ProtocolConverter.asUri(uri), ids], token).catch(
            (e) => ({ results: [], error: e instanceof Error ? e.message : String(e) }),
          ),
        );
        const done = new Set<string>();
        for (const result of answer.results) {
          const item = file.children.get(testId(key, result.id));
          if (!item) continue;
          done.add(item.id);
          this.report(run, item, uri, result);
        }
        for (const item of items.filter((i) => !done.has(i.id))) {
          if (answer.error) run.errored(item, new vscode.TestMessage(`mlirtext: ${answer.error}`));
          else run.skipped(item);
        }
      }
    } finally {
      run.end();
    }
  }

  private report(run: vscode.TestRun, item: vscode.TestItem, uri: vscode.Uri, result: ServerResult): void {
    const ms = result.seconds * 1000;
    if (result.status === 'passed') {
      run.passed(item, ms);
      return;
    }
    const messages = result.failures.map((f) => {
      const shown = failureMessage(f);
      const message = shown.diff
        ? vscode.TestMessage.diff(shown.message, shown.diff.expected, shown.diff.actual)
        : new vscode.TestMessage(shown.message);
      message.location = new vscode.Location(uri, toRange(f.range));
      return message;
    });
    if (messages.length === 0) {
      const only = new vscode.TestMessage(result.message);
      if (item.range) only.location = new vscode.Location(uri, item.range);
      messages.push(only);
    }
    if (result.status === 'failed') run.failed(item, messages, ms);
    else run.errored(item, messages, ms);
  }
}

function toRange(r: ServerRange): vscode.Range {
  return new vscode.Range(r[0], r[1], r[2], r[3]);
}
