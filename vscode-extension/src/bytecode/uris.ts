/**
 * The text view of a `.mlirbc` file is a document of its own scheme, `mlirbc:`, at the file's
 * path (so its name, folder and language, mlir by the `.mlirbc` extension, stay the file's); the
 * file's own scheme (`file`, or a remote one) rides in the query. Plain parts, no `vscode`
 * import, so the mapping is unit-tested outside VS Code.
 */
export const BYTECODE_SCHEME = 'mlirbc';

export interface UriParts {
  scheme: string;
  authority: string;
  path: string;
  query: string;
}

/** The parts of the text view's URI for a bytecode file's URI. */
export function textViewOf(file: UriParts): UriParts {
  return { scheme: BYTECODE_SCHEME, authority: file.authority, path: file.path, query: file.scheme };
}

/** The parts of the bytecode file's URI behind a text view's URI (`file` when the query is empty). */
export function fileOf(view: UriParts): UriParts {
  return { scheme: view.query || 'file', authority: view.authority, path: view.path, query: '' };
}

/** A server answer: the text or the bytecode (base64), or one line saying why not. */
export interface BytecodeAnswer {
  text?: string;
  data?: string;
  error?: string;
}

/** The answer's `key`, or an Error with the server's line (an answer of another shape says so). */
export function answerField(answer: BytecodeAnswer | null | undefined, key: 'text' | 'data'): string {
  const value = answer?.[key];
  if (typeof value === 'string') {
    return value;
  }
  throw new Error(answer?.error ?? `the language server gave no ${key === 'text' ? 'text' : 'bytecode'}`);
}
