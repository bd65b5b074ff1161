/**
 * The mlirtext extension: the `mlir` language (grammar and configuration come from
 * package.json), the language server client, and the commands and pipeline view
 * built on the server's code actions and `workspace/executeCommand` commands, and the
 * Testing panel's tests (src/testing/).
 */
import * as vscode from 'vscode';
import { isMlirTakenForBinary } from './binaryText';
import { BytecodeEditor, BytecodeFileSystem } from './bytecode/fileSystem';
import { BYTECODE_SCHEME } from './bytecode/uris';
import { lowerCommand } from './commands/lower';
import { GraphView } from './commands/graph';
import { PipelineView } from './commands/pipeline';
import { runCommand } from './commands/run';
import { ProfileLenses } from './profileLens';
import { DebuggingCommands } from './debugging/commands';
import { MlirServer, SHOW_PIPELINE_COMMAND } from './serverProcess';
import { SHOW_OUTPUT_COMMAND, StatusItem } from './statusItem';
import { MlirTestController } from './testing/controller';

let server: MlirServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<object> {
  const log = vscode.window.createOutputChannel('mlirtext language server');
  const results = vscode.window.createOutputChannel('mlirtext run');
  server = new MlirServer(log);
  const lenses = new ProfileLenses();
  const pipeline = new PipelineView(context.extensionUri, server, lenses);
  const graph = new GraphView(context.extensionUri, server, log);
  const debugging = new DebuggingCommands(server, (document, fn, result) => {
    pipeline.markDivergence(document, fn, result);
    graph.markDivergence(document, fn, result);
  });
  const s = server;
  context.subscriptions.push(
    log,
    results,
    server,
    new StatusItem(vscode.window.createStatusBarItem('mlirtext.server', vscode.StatusBarAlignment.Left), s),
    vscode.commands.registerCommand(SHOW_OUTPUT_COMMAND, () => s.showLog()),
    pipeline,
    lenses,
    vscode.languages.registerCodeLensProvider({ language: 'mlir' }, lenses),
    debugging,
    graph,
    // `.mlirbc` files open as MLIR text (an `mlirbc:` document) and save as bytecode.
    vscode.workspace.registerFileSystemProvider(BYTECODE_SCHEME, new BytecodeFileSystem(s), { isCaseSensitive: true }),
    vscode.window.registerCustomEditorProvider(BytecodeEditor.viewType, new BytecodeEditor()),
    new MlirTestController(server),
    // An `.mlir` file with a NUL byte, opened anyway after VS Code took it for binary, is MLIR again.
    vscode.workspace.onDidOpenTextDocument(claimIfTakenForBinary),
    // Client command ids differ from the server's (`mlirtext.run`, `mlirtext.pipeline`,
    // `mlirtext.applyAction`), which the language client registers itself.
    vscode.commands.registerCommand('mlirtext.lowerFunctionToNextLevel', () => lowerCommand(s, 'next')),
    vscode.commands.registerCommand('mlirtext.lowerFunctionTo', (level?: string) => lowerCommand(s, 'pick', level)),
    vscode.commands.registerCommand('mlirtext.lowerModuleTo', (level?: string) => lowerCommand(s, 'module', level)),
    vscode.commands.registerCommand('mlirtext.runFunction', (fn?: string, inputs?: string[], device?: string) =>
      runCommand(s, results, fn, inputs, device, lenses),
    ),
    // Hover's link passes the op's line and document: the view opens with that op marked at every level.
    vscode.commands.registerCommand(SHOW_PIPELINE_COMMAND, (fn?: string, line?: number, uri?: string) =>
      pipeline.show(fn, line, uri),
    ),
    // Offered as code actions by the server (mlirtext/analysis/debug_commands.py).
    vscode.commands.registerCommand('mlirtext.findDivergence', (fn?: string, inputs?: string[], faults?: string[]) =>
      debugging.findDivergence(fn, inputs, faults),
    ),
    vscode.commands.registerCommand('mlirtext.reduceFailure', (fn?: string, faults?: string[]) =>
      debugging.reduceFailure(fn, faults),
    ),
    vscode.commands.registerCommand('mlirtext.openRepro', (dir?: string) => debugging.openRepro(dir)),
    vscode.commands.registerCommand('mlirtext.showGraph', (fn?: string) => graph.show(fn)),
    vscode.commands.registerCommand('mlirtext.restartServer', async () => {
      await s.restart();
      if (s.state === 'running') {
        void vscode.window.setStatusBarMessage('mlirtext: language server restarted', 5000);
      }
    }),
    // Trust widens what the server command may come from (src/trust.ts): start it again.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void s.restart()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mlirtext.server')) {
        void s.restart();
      }
    }),
  );
  vscode.workspace.textDocuments.forEach(claimIfTakenForBinary);   // one that activated the extension
  // Not awaited: activation must not wait on a Python import; commands wait for the start.
  void server.start();
  return { serverState: () => s.state };
}

function claimIfTakenForBinary(document: vscode.TextDocument): void {
  if (isMlirTakenForBinary(document.languageId, document.uri.path)) {
    void vscode.languages.setTextDocumentLanguage(document, 'mlir');
  }
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
