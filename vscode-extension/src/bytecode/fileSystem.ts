/**
 * `mlirbc:` documents: a `.mlirbc` file read as MLIR text and written back as bytecode, through
 * the language server (`mlirtext/decodeBytecode`, `mlirtext/encodeBytecode`: the Python reader and
 * writer). A text that does not parse or verify is refused with the server's one-line message
 * (VS Code shows "Failed to save"), and the file is not touched: the bytes are written only once
 * the whole module has been encoded.
 */
import * as vscode from 'vscode';
import { MlirServer } from '../serverProcess';
import { BytecodeAnswer, answerField, fileOf, textViewOf } from './uris';

export function textView(file: vscode.Uri): vscode.Uri {
  return file.with(textViewOf(file));
}

export function bytecodeFile(view: vscode.Uri): vscode.Uri {
  return view.with(fileOf(view));
}

export class BytecodeFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  constructor(private readonly server: MlirServer) {}

  /** Changes to the file on disk (another tool rewrote it) reach the open text view. */
  watch(uri: vscode.Uri): vscode.Disposable {
    const file = bytecodeFile(uri);
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.joinPath(file, '..'), file.path.slice(file.path.lastIndexOf('/') + 1)),
    );
    const fire = (type: vscode.FileChangeType) => () => this.changed.fire([{ type, uri }]);
    return vscode.Disposable.from(
      watcher,
      watcher.onDidChange(fire(vscode.FileChangeType.Changed)),
      watcher.onDidCreate(fire(vscode.FileChangeType.Created)),
      watcher.onDidDelete(fire(vscode.FileChangeType.Deleted)),
    );
  }

  stat(uri: vscode.Uri): Thenable<vscode.FileStat> {
    return vscode.workspace.fs.stat(bytecodeFile(uri));
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const file = bytecodeFile(uri);
    const data = await vscode.workspace.fs.readFile(file);
    const answer = await this.request('open a bytecode file', 'mlirtext/decodeBytecode', {
      uri: file.toString(),
      data: Buffer.from(data).toString('base64'),
    });
    return new TextEncoder().encode(this.field(answer, 'text'));
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const file = bytecodeFile(uri);
    const answer = await this.request('save a bytecode file', 'mlirtext/encodeBytecode', {
      uri: file.toString(),
      text: new TextDecoder().decode(content),
    });
    await vscode.workspace.fs.writeFile(file, Buffer.from(this.field(answer, 'data'), 'base64'));
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  // The folder operations act on the files themselves (a save-as or a rename in this scheme).
  readDirectory(uri: vscode.Uri): Thenable<[string, vscode.FileType][]> {
    return vscode.workspace.fs.readDirectory(bytecodeFile(uri));
  }

  createDirectory(uri: vscode.Uri): Thenable<void> {
    return vscode.workspace.fs.createDirectory(bytecodeFile(uri));
  }

  delete(uri: vscode.Uri, options: { recursive: boolean }): Thenable<void> {
    return vscode.workspace.fs.delete(bytecodeFile(uri), options);
  }

  rename(from: vscode.Uri, to: vscode.Uri, options: { overwrite: boolean }): Thenable<void> {
    return vscode.workspace.fs.rename(bytecodeFile(from), bytecodeFile(to), options);
  }

  private async request(what: string, method: string, params: object): Promise<BytecodeAnswer> {
    const client = await this.server.require(what);
    if (!client) {
      throw vscode.FileSystemError.Unavailable(`mlirtext: cannot ${what}: the language server is not running`);
    }
    return client.sendRequest<BytecodeAnswer>(method, params);
  }

  private field(answer: BytecodeAnswer, key: 'text' | 'data'): string {
    try {
      return answerField(answer, key);
    } catch (e) {
      // A plain error: a NoPermissions one would have VS Code offer to save as administrator.
      throw new vscode.FileSystemError((e as Error).message);
    }
  }
}

/**
 * Opening a `.mlirbc` file: this editor (the default for the pattern) opens its text view in its
 * place, as an `mlir` document with every language feature; a file that cannot be read keeps
 * this editor, saying why.
 */
export class BytecodeEditor implements vscode.CustomReadonlyEditorProvider {
  static readonly viewType = 'mlirtext.bytecode';

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => {} };
  }

  resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): void {
    panel.webview.html = page('Opening the bytecode as MLIR text…');
    // Not awaited: the editor group opens one editor at a time, so the text view can open only
    // once this one is resolved.
    void openAsText(document.uri, panel);
  }
}

async function openAsText(file: vscode.Uri, panel: vscode.WebviewPanel): Promise<void> {
  try {
    await vscode.window.showTextDocument(textView(file), { viewColumn: panel.viewColumn, preview: false });
    panel.dispose();
  } catch (e) {
    panel.webview.html = page(`mlirtext: cannot open ${file.fsPath} as text: ${(e as Error).message}`);
  }
}

function page(message: string): string {
  const escaped = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none';"></head>` +
    `<body><p>${escaped}</p></body></html>`;
}
