// "Find where @mlp's numbers diverge" on the MLP with a fault set: the bisect check runs it, and the
// graph check, whose marks come from the last bisect, runs it too when it runs alone.
import { chooseCodeAction, clickToken, editUserSettings, hoverOverOp, openFile, runCommand, serverReady, waitFor } from './workbench.mjs';

const MLP = 'mlp_stablehlo.mlir';
// The relu's maximum nudged by the first canonicalize after the linalg step (README, "Finding what broke").
const FAULT = '--debug-miscompile=canonicalize:arith.maximumf';

let found = false;

/** Whether a bisect of @mlp found its divergence in this run (the extension keeps its marks). */
export function mlpDivergenceFound() {
  return found;
}

/**
 * With the fault set, the MLP opened alone and the code action run: the hover's text over the
 * guilty maximum once it shows the marker (which names the pass), and over the add once it is the
 * add's own (its summary). The settings are `settings` again after.
 */
export async function findMlpDivergence(page, settings) {
  // The server running first: run alone, an edit of the user settings before the extension started
  // left it without the server path (python3 from PATH).
  await openFile(page, MLP);
  await serverReady(page);
  await editUserSettings(page, { ...settings, 'mlirtext.debug.faults': [FAULT] });
  await runCommand(page, 'View: Close All Editors');
  await openFile(page, MLP);
  await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
  // The action comes from the server (run alone, this comes while it is still starting).
  await serverReady(page);
  await chooseCodeAction(page, "Find where @mlp's numbers diverge");
  await waitFor('a marker in the editor', async () => (await page.locator('.part.editor .squiggly-error').count()) > 0, 120_000);
  // The marker is on the guilty op: hovering the op shows it, with the pass.
  const guilty = await hoverOverOp(page, 'stablehlo.maximum', '%h = stablehlo.maximum', ['mlirtext bisect', 'diverged']);
  found = true;
  const add = await hoverOverOp(page, 'stablehlo.add', '%2 = stablehlo.add', ['Elementwise add']);
  await page.mouse.move(5, 5);
  await editUserSettings(page, settings);
  return { guilty, add };
}
