/** The requests the commands send to the server, spelled once. */
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { CodeActionLike } from './lowerActions';

/** The server's code actions at a position (its own only, not other extensions'). */
export async function codeActionsAt(
  client: LanguageClient,
  document: vscode.TextDocument,
  position: vscode.Position,
): Promise<CodeActionLike[]> {
  const at = client.code2ProtocolConverter.asPosition(position);
  const answer = await client.sendRequest<(CodeActionLike | { command: string })[] | null>('textDocument/codeAction', {
    textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
    range: { start: at, end: at },
    context: { diagnostics: [] },
  });
  return (answer ?? []).filter((a): a is CodeActionLike => 'title' in a && typeof a.title === 'string');
}

/** `workspace/executeCommand` to the server, with its answer; `token` cancels it (the server stops at its next check). */
export function executeServerCommand<T>(
  client: LanguageClient,
  command: string,
  args: unknown[],
  token?: vscode.CancellationToken,
): Promise<T> {
  const params = { command, arguments: args };
  // Not `sendRequest(method, params, undefined)`: without a token there, the library sends [params, null] as the params.
  return token
    ? client.sendRequest<T>('workspace/executeCommand', params, token)
    : client.sendRequest<T>('workspace/executeCommand', params);
}

/** The document's URI as the server knows it (the client's spelling, from didOpen). */
export function serverUri(client: LanguageClient, document: vscode.TextDocument): string {
  return client.code2ProtocolConverter.asUri(document.uri);
}
