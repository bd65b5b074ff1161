/** Run function: ask for inputs (or none: random), run on the server, log outputs and time. */
import * as path from 'path';
import * as vscode from 'vscode';
import { DEVICES_SERVER_COMMAND, DeviceList, configuredDevice, deviceChoices, deviceListProblem } from '../devices';
import { executeServerCommand, serverUri } from '../protocol';
import { RunResult, formatRunResult, formatSeconds, inputTemplate, parseInputsLine, runCommandArguments } from '../runInputs';
import { ProfileResult } from '../pipeline/model';
import { ProfileLenses } from '../profileLens';
import { MlirServer } from '../serverProcess';
import { lastInputs } from '../debugging/results';
import { PROFILE_SERVER_COMMAND } from './pipeline';
import { runTarget } from './target';

export const RUN_SERVER_COMMAND = 'mlirtext.run';

/**
 * `inputs` given (an array, possibly empty for random) skips the input box, and
 * `device` the device pick (default: the `mlirtext.run.device` setting): for
 * keybindings and other extensions calling `mlirtext.runFunction`.
 */
export async function runCommand(
  server: MlirServer,
  results: vscode.OutputChannel,
  fnName?: string,
  inputs?: string[],
  device?: string,
  lenses?: ProfileLenses,
): Promise<RunResult | undefined> {
  const target = await runTarget(server, fnName, 'run a function');
  if (!target) {
    return undefined;
  }
  const { editor, fn, client } = target;
  let given = inputs && inputs.length > 0 ? inputs : undefined;
  // Asked now, answered while the user types the inputs (joining a cluster takes seconds).
  const listed =
    device === undefined && inputs === undefined
      ? executeServerCommand<DeviceList | null>(client, DEVICES_SERVER_COMMAND, []).catch(() => null)
      : undefined;
  if (inputs === undefined) {
    const template = inputTemplate(fn.argTypes);
    const line = await vscode.window.showInputBox({
      title: `Run @${fn.name}`,
      prompt: `Inputs in iree-run-module syntax, separated by ';' (or as --input=... flags). Empty: random inputs.`,
      placeHolder: template || 'e.g. 2x3xf32=1 2 3 4 5 6; 4xi32=7',
      ignoreFocusOut: true,
    });
    if (line === undefined) {
      return undefined; // cancelled
    }
    given = parseInputsLine(line);
  }
  const chosen =
    device ?? (inputs === undefined ? await pickDevice(fn.name, (await listed) ?? null) : configuredDevice(defaultDevice()));
  if (chosen === undefined) {
    return undefined; // cancelled
  }
  const file = path.basename(editor.document.fileName);
  const args = runCommandArguments(serverUri(client, editor.document), fn.name, given, 0, chosen);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: `Running @${fn.name} on ${chosen}` },
    () => executeServerCommand<RunResult | null>(client, RUN_SERVER_COMMAND, args),
  );
  const answer: RunResult = result ?? { function: fn.name, error: 'the server did not answer (see its log)' };
  results.append(formatRunResult({ function: fn.name, ...answer }, file, given === undefined));
  results.show(true);
  if (answer.error) {
    void vscode.window.showErrorMessage(`mlirtext: @${fn.name}: ${answer.error}`);
  } else {
    lastInputs.remember(editor.document.uri.toString(), fn.name, given);
    void vscode.window.setStatusBarMessage(`mlirtext: @${fn.name} ran in ${formatSeconds(answer.seconds)} on ${chosen}`, 8000);
    if (lenses && PROFILED_DEVICES.includes(chosen)) {
      // Then its profile (the same arguments): the table in the output, each op's share over it.
      const document = editor.document;
      void executeServerCommand<ProfileResult | null>(client, PROFILE_SERVER_COMMAND, args).then((profile) => {
        if (profile && !profile.error) {
          results.append(`profile of @${fn.name} on ${chosen}:\n${profile.table ?? ''}\n`);
          lenses.set(document, profile);
        }
      });
    }
  }
  return answer;
}

/** The devices a run is profiled on (native code: the others have no dispatches to time). */
const PROFILED_DEVICES: string[] = ['local-sync', 'local-task'];

function defaultDevice(): unknown {
  return vscode.workspace.getConfiguration('mlirtext.run').get('device');
}

/**
 * The device to run on: a quick pick with the setting's device first (Enter takes it), the
 * cluster's devices after the local ones; a cluster that cannot be reached is said in one line.
 */
async function pickDevice(fnName: string, listed: DeviceList | null): Promise<string | undefined> {
  const problem = deviceListProblem(listed);
  if (problem) {
    void vscode.window.showErrorMessage(`mlirtext: ${problem}`);
  }
  const picked = await vscode.window.showQuickPick(deviceChoices(configuredDevice(defaultDevice()), listed), {
    title: `Run @${fnName} on`,
    placeHolder: 'the device (the default is the mlirtext.run.device setting)',
    ignoreFocusOut: true,
  });
  return picked?.id;
}
