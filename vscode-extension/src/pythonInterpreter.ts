/**
 * The interpreter selected in the Python extension (ms-python.python), read through
 * its public API. Two API generations exist; both are tried. The functions take the
 * API object as a parameter (duck-typed) so tests can pass a fake.
 */

export const PYTHON_EXTENSION_ID = 'ms-python.python';

interface ExecutionDetails {
  execCommand?: string[] | undefined;
}

/** The subset of the Python extension's exported API that we read. */
export interface PythonApiLike {
  settings?: { getExecutionDetails?(resource?: unknown): ExecutionDetails | undefined };
  environments?: {
    getActiveEnvironmentPath?(resource?: unknown): { path?: string } | undefined;
    resolveEnvironment?(
      env: unknown,
    ): Promise<{ executable?: { uri?: { fsPath?: string } } } | undefined> | undefined;
  };
}

/** The selected interpreter as a command (one or more words), or undefined when none is known. */
export async function interpreterFromPythonApi(
  api: PythonApiLike | undefined,
  resource?: unknown,
): Promise<string[] | undefined> {
  if (!api) {
    return undefined;
  }
  const exec = api.settings?.getExecutionDetails?.(resource)?.execCommand;
  if (exec && exec.length > 0 && exec[0]) {
    return exec;
  }
  const env = api.environments?.getActiveEnvironmentPath?.(resource);
  if (env && api.environments?.resolveEnvironment) {
    const resolved = await api.environments.resolveEnvironment(env);
    const path = resolved?.executable?.uri?.fsPath;
    if (path) {
      return [path];
    }
  }
  return env?.path ? [env.path] : undefined;
}
