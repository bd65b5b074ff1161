/**
 * `.mlir` files VS Code took for binary. A file with a NUL byte among its first bytes opens as
 * "binary" (a placeholder); its "Open Anyway" shows the text in the language `code-text-binary`,
 * which no extension serves: the extension puts such a document back in the MLIR language, so that
 * the server reads it and says what is wrong with it. Pure (no `vscode` import): unit-tested.
 */

/** The language VS Code gives a binary file opened as text. */
export const BINARY_TEXT_LANGUAGE = 'code-text-binary';

/** Whether a document of `languageId` at `path` is an MLIR file VS Code took for binary. */
export function isMlirTakenForBinary(languageId: string, path: string): boolean {
  return languageId === BINARY_TEXT_LANGUAGE && /\.mlir$/i.test(path);
}
