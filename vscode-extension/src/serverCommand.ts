/**
 * Which process to start as the language server, from the settings and the
 * interpreter the Python extension has selected. Pure: no vscode import, so the
 * rules are unit tested with `node --test`.
 */

export interface ServerSettings {
  /** `mlirtext.server.path`: a Python interpreter or the `mlirtext` console script; empty for the default. */
  path: string;
  /** `mlirtext.server.args`: replaces the default arguments when not empty. */
  args: string[];
}

export type ServerSource = 'setting' | 'python-extension' | 'path';

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
  /**
   * How to run Python code with the same interpreter (command + leading args), used
   * to check that mlirtext is importable before starting. Undefined when the server
   * is not started through an interpreter we can name (a console script).
   */
  python?: string[];
}

/** The module invocation that starts the server on stdio. */
export const LSP_MODULE_ARGS = ['-m', 'mlirtext', 'lsp'];
export const DEFAULT_PYTHON = 'python3';

/** `python`, `python3`, `python3.11`, `python.exe`, `pythonw.exe`: a path whose file name is an interpreter. */
export function isPythonInterpreter(path: string): boolean {
  const base = path.split(/[\\/]/).pop() ?? '';
  return /^python[w]?(\d+(\.\d+)*)?(\.exe)?$/i.test(base);
}

/**
 * The server command, by priority:
 *   1. `mlirtext.server.path`: an interpreter runs `-m mlirtext lsp`; anything else
 *      (the `mlirtext` console script) runs `lsp`. `mlirtext.server.args` replaces either.
 *   2. the Python extension's interpreter (`execCommand` may have several words, as
 *      `conda run -n env python` does), running `-m mlirtext lsp`;
 *   3. `python3` from PATH.
 */
export function resolveServerCommand(settings: ServerSettings, pythonExecCommand?: string[]): ServerCommand {
  const path = settings.path.trim();
  const custom = settings.args.length > 0 ? [...settings.args] : undefined;
  if (path) {
    if (isPythonInterpreter(path)) {
      return { command: path, args: custom ?? [...LSP_MODULE_ARGS], source: 'setting', python: [path] };
    }
    return { command: path, args: custom ?? ['lsp'], source: 'setting' };
  }
  const exec = (pythonExecCommand ?? []).filter((w) => w.length > 0);
  if (exec.length > 0) {
    return {
      command: exec[0],
      args: [...exec.slice(1), ...(custom ?? LSP_MODULE_ARGS)],
      source: 'python-extension',
      python: exec,
    };
  }
  return { command: DEFAULT_PYTHON, args: custom ?? [...LSP_MODULE_ARGS], source: 'path', python: [DEFAULT_PYTHON] };
}

/** The probe that tells whether the server can start: mlirtext and its protocol library import. */
export const PROBE_CODE = 'import mlirtext, pygls';

export function probeCommand(server: ServerCommand): { command: string; args: string[] } | undefined {
  if (!server.python) {
    return undefined;
  }
  return { command: server.python[0], args: [...server.python.slice(1), '-c', PROBE_CODE] };
}

/** A shell-ready spelling of a command (for messages the user may copy). */
export function shellQuote(words: string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The command that installs the server into the interpreter that lacks it. */
export function installCommand(server: ServerCommand): string {
  const python = server.python ?? [DEFAULT_PYTHON];
  return shellQuote([...python, '-m', 'pip', 'install', 'mlirtext']);
}

/** The message shown when the probe fails: what was tried, why it failed, how to fix it. */
export function notImportableMessage(server: ServerCommand, stderr: string): string {
  const python = shellQuote(server.python ?? [DEFAULT_PYTHON]);
  const missing = /No module named '([^']+)'/.exec(stderr)?.[1];
  const why = missing ? `module '${missing}' is not installed` : firstLine(stderr) || 'the import failed';
  const from = {
    setting: 'the mlirtext.server.path setting',
    'python-extension': "the Python extension's selected interpreter",
    path: 'PATH',
  }[server.source];
  return (
    `mlirtext language server: cannot import mlirtext with ${python} (from ${from}): ${why}. ` +
    `Install it with: ${installCommand(server)} (from a checkout: pip install -e .), ` +
    `or set mlirtext.server.path to an interpreter that has it.`
  );
}

/** The message shown when the interpreter itself cannot be started. */
export function notFoundMessage(server: ServerCommand, error: string): string {
  return (
    `mlirtext language server: cannot start '${server.command}' (${error}). ` +
    `Install Python 3.10+ and mlirtext (pip install mlirtext), or set mlirtext.server.path.`
  );
}

/** The message shown when the server process starts but stops before answering `initialize`. */
export function startFailedMessage(server: ServerCommand, error: string): string {
  return (
    `mlirtext language server: '${shellQuote([server.command, ...server.args])}' stopped during start-up (${error}). ` +
    `Its own messages are in the "mlirtext language server" output.`
  );
}

function firstLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1]?.trim() ?? '';
}
