/** Lower function to next level / Lower function to... / Lower module to...: the server's code actions, chosen from the palette. */
import * as vscode from 'vscode';
import {
  ApplyResult,
  Lowering,
  applyFailure,
  functionLowerings,
  lowerings,
  moduleLowerings,
  nextLevelLowering,
} from '../lowerActions';
import { codeActionsAt, executeServerCommand } from '../protocol';
import { MlirServer } from '../serverProcess';
import { activeMlirEditor, positionIn, targetFunction } from './target';

export type LowerMode = 'next' | 'pick' | 'module';

export async function lowerCommand(server: MlirServer, mode: LowerMode, level?: string): Promise<boolean> {
  const editor = activeMlirEditor();
  if (!editor) {
    return false;
  }
  const client = await server.require('lower');
  if (!client) {
    return false;
  }
  let position = editor.selection.active;
  if (mode !== 'module') {
    const fn = await targetFunction(editor);
    if (!fn) {
      return false;
    }
    position = positionIn(fn, editor);
  }
  const found = lowerings(await codeActionsAt(client, editor.document, position));
  const chosen = await choose(found, mode, level);
  if (!chosen) {
    return false;
  }
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: chosen.title },
    () => executeServerCommand<ApplyResult | null>(client, chosen.command, chosen.arguments),
  );
  const failure = applyFailure(result);
  if (failure) {
    void vscode.window.showErrorMessage(`mlirtext: ${chosen.title}: ${failure}`);
    return false;
  }
  return true;
}

async function choose(found: Lowering[], mode: LowerMode, level?: string): Promise<Lowering | undefined> {
  const candidates = mode === 'module' ? moduleLowerings(found) : functionLowerings(found);
  if (candidates.length === 0) {
    const what = mode === 'module' ? 'this module' : 'this function';
    void vscode.window.showWarningMessage(
      `mlirtext: nothing to lower in ${what} (it is at the lowest level, or its level is unknown).`,
    );
    return undefined;
  }
  if (level) {
    const exact = candidates.find((c) => c.level === level);
    if (!exact) {
      void vscode.window.showWarningMessage(`mlirtext: cannot lower to ${level} from here.`);
    }
    return exact;
  }
  if (mode === 'next') {
    return nextLevelLowering(candidates);
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: c.level ?? c.title, description: c.title, lowering: c })),
    { placeHolder: mode === 'module' ? 'Lower the module to which level?' : 'Lower the function to which level?' },
  );
  return pick?.lowering;
}
