/**
 * The profile's code lenses: over each source op of a function that was profiled (the
 * pipeline view profiles it), its share of the run time and the dispatches it went into.
 * Kept per document version: an edit makes them stale, and they go until the next profile.
 */
import * as vscode from 'vscode';
import { OpShare, ProfileResult } from './pipeline/model';
import { shareLabel } from './pipeline/profile';

export class ProfileLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly profiles = new Map<string, { version: number; ops: OpShare[] }>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  /** Show `result`'s shares on `document` (as it is now). */
  set(document: vscode.TextDocument, result: ProfileResult): void {
    if (result.error || !result.ops) {
      return;
    }
    this.profiles.set(document.uri.toString(), { version: document.version, ops: result.ops });
    this.changed.fire();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const found = this.profiles.get(document.uri.toString());
    if (!found || found.version !== document.version) {
      return [];
    }
    return found.ops
      .filter((op) => op.line < document.lineCount)
      .map((op) => new vscode.CodeLens(document.lineAt(op.line).range, { title: shareLabel(op), command: '' }));
  }

  dispose(): void {
    this.changed.dispose();
  }
}
