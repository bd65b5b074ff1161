/**
 * What a workspace the user has not trusted may decide. Such a workspace (a cloned
 * repository opened in restricted mode) must not choose the program the extension
 * starts, nor make it run the workspace's own code. VS Code already ignores workspace
 * values of the settings in package.json's `restrictedConfigurations` in restricted
 * mode; these rules apply the same in code, so no later change to how settings are read
 * can let one through. Pure: no vscode import, unit tested with `node --test`.
 */
import { ServerSettings } from './serverCommand';

/**
 * The settings that name a program, a path or arguments, or where a function's code is sent to run
 * (the Ray cluster of `mlirtext.cluster`); package.json restricts the same list.
 */
export const RESTRICTED_SETTINGS = ['mlirtext.server.path', 'mlirtext.server.args', 'mlirtext.cluster'];

/** The part of `WorkspaceConfiguration.inspect` these rules read. */
export interface InspectedSetting<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * A setting's value as the extension may use it: VS Code's resolution (`resolved`) in a
 * trusted workspace; the user's own value (else the default) in an untrusted one.
 */
export function allowedValue<T>(trusted: boolean, resolved: T, inspected: InspectedSetting<T> | undefined): T {
  if (trusted) {
    return resolved;
  }
  return inspected?.globalValue ?? inspected?.defaultValue ?? resolved;
}

/** `mlirtext.server.path` and `.args` as the server command may use them. */
export function allowedServerSettings(
  trusted: boolean,
  resolved: ServerSettings,
  path: InspectedSetting<string> | undefined,
  args: InspectedSetting<string[]> | undefined,
): ServerSettings {
  return { path: allowedValue(trusted, resolved.path, path), args: allowedValue(trusted, resolved.args, args) };
}

/**
 * Whether the Python extension's selected interpreter may start the server. Not in an
 * untrusted workspace: that extension picks a workspace's own `.venv` or its
 * `python.defaultInterpreterPath`, both the repository's choice.
 */
export function mayUseWorkspaceInterpreter(trusted: boolean): boolean {
  return trusted;
}

/** Why "Run Function" and the pipeline's device runs are off in restricted mode. */
export const UNTRUSTED_RUN_MESSAGE =
  'mlirtext: running functions is off in restricted mode: a function compiled to native code can run any code ' +
  'the file asks for. Trust this workspace (Manage Workspace Trust) to run it.';
