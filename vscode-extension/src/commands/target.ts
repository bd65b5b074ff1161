/** Which document and function a command works on: the active `.mlir` editor and the function at its cursor. */
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { FunctionInfo, findFunctions, functionAtLine } from '../functions';
import { MlirServer } from '../serverProcess';
import { UNTRUSTED_RUN_MESSAGE } from '../trust';

export interface Target {
  editor: vscode.TextEditor;
  fn: FunctionInfo;
}

export function activeMlirEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'mlir') {
    void vscode.window.showWarningMessage('mlirtext: open an .mlir file first (the command works on the active editor).');
    return undefined;
  }
  return editor;
}

/**
 * The function under the cursor; else, when the file has several, the one the user
 * picks; when it has one, that one. `name` (from a caller) wins over both.
 */
export async function targetFunction(editor: vscode.TextEditor, name?: string): Promise<FunctionInfo | undefined> {
  const functions = findFunctions(editor.document.getText());
  if (name) {
    const wanted = name.replace(/^@/, '');
    const found = functions.find((f) => f.name === wanted);
    if (!found) {
      void vscode.window.showErrorMessage(`mlirtext: no function @${wanted} in ${editor.document.fileName}`);
    }
    return found;
  }
  const here = functionAtLine(functions, editor.selection.active.line);
  if (here) {
    return here;
  }
  if (functions.length === 1) {
    return functions[0];
  }
  if (functions.length === 0) {
    void vscode.window.showWarningMessage('mlirtext: this file has no function.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    functions.map((f) => ({ label: `@${f.name}`, description: `line ${f.line + 1}`, fn: f })),
    { placeHolder: 'Which function?' },
  );
  return pick?.fn;
}

/** Put the cursor on the function's header line: code actions are asked for at the cursor. */
export function positionIn(fn: FunctionInfo, editor: vscode.TextEditor): vscode.Position {
  const active = editor.selection.active;
  if (active.line >= fn.line && active.line <= fn.endLine) {
    return active;
  }
  return new vscode.Position(fn.line, 0);
}

/**
 * The function a command runs (the one named, or the one at the cursor of the active `.mlir` editor)
 * and the server's client; undefined once the user is told why not (an untrusted workspace runs
 * nothing, no `.mlir` editor, no such function, no server to `what`).
 */
export async function runTarget(
  server: MlirServer,
  fnName: string | undefined,
  what: string,
): Promise<(Target & { client: LanguageClient }) | undefined> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage(UNTRUSTED_RUN_MESSAGE);
    return undefined;
  }
  const editor = activeMlirEditor();
  if (!editor) {
    return undefined;
  }
  const fn = await targetFunction(editor, fnName);
  if (!fn) {
    return undefined;
  }
  const client = await server.require(what);
  return client ? { editor, fn, client } : undefined;
}
