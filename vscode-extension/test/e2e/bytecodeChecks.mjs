// The end-to-end checks of issue 25's editor pieces: a `.mlirbc` file (written by iree-opt)
// opens as MLIR text with the server's features, an edit saves as bytecode that iree-opt reads,
// a text that does not parse is refused with the file untouched; and F12 on an op's
// `loc("model.py":3:5)` opens model.py at that line.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { clickToken, cursor, editorLines, notifications, openFile, runCommand, sleep, tokenBox, waitFor } from './workbench.mjs';

const BYTECODE = 'mlp.mlirbc';
const IMPORTED = 'imported.mlir';
const MAGIC = Buffer.from([0x4d, 0x4c, 0xef, 0x52]); // "ML\xefR"

/** iree-opt beside the interpreter (the dev extra), else mlirtext's own writer. */
function bytecodeTool(python) {
  const iree = join(dirname(python), 'iree-opt');
  return existsSync(iree) ? { command: iree, args: [], name: 'iree-opt' } : { command: python, args: ['-m', 'mlirtext', 'opt'], name: 'mlirtext opt' };
}

/** The files these checks open, written into the workspace before the workbench starts. */
export function writeBytecodeFiles(python, repo, workspace) {
  const tool = bytecodeTool(python);
  execFileSync(tool.command, [...tool.args, '--emit-bytecode', join(repo, 'examples/mlp_stablehlo.mlir'), '-o', join(workspace, BYTECODE)]);
  writeFileSync(join(workspace, 'model.py'), ['import jax', '', 'def f(x):', '    return jax.numpy.exp(x)', ''].join('\n'));
  writeFileSync(join(workspace, IMPORTED), [
    'func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {',
    '  %0 = stablehlo.exponential %x : tensor<4xf32> loc("model.py":4:12)',
    '  return %0 : tensor<4xf32>',
    '}',
    '',
  ].join('\n'));
}

export const bytecodeChecks = [
  {
    name: 'a .mlirbc file opens as MLIR text: hover, edit, save as bytecode that iree-opt reads',
    async run({ page, workspace, python, out }) {
      const file = join(workspace, BYTECODE);
      const tool = bytecodeTool(python);
      await runCommand(page, 'View: Close All Editors');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await openFile(page, BYTECODE);
      await waitFor('the bytecode shown as MLIR text', async () =>
        (await editorLines(page)).some((l) => l.includes('stablehlo.dot_general')), 60_000);
      const mode = (await page.locator('[id="status.editor.mode"]').first().textContent())?.trim();
      if (mode !== 'MLIR') {
        throw new Error(`the text view's language is ${mode}`);
      }
      // The server's hover on an op (its operand and result types) works on the text view.
      const hover = page.locator('.monaco-hover:not(.hidden)').first();
      const shown = await waitFor('a hover on stablehlo.add', async () => {
        await page.mouse.move(5, 5);
        await sleep(150);
        const box = await tokenBox(page, 'stablehlo.add', '= stablehlo.add');
        await page.mouse.move(box.x + 20, box.y + box.height / 2);
        await hover.waitFor({ state: 'visible', timeout: 5000 }).catch(() => {});
        const t = (await hover.textContent({ timeout: 1000 }).catch(() => '')) ?? '';
        return t.includes('operands:') && t.includes('tosa.add') ? t : null;
      }, 90_000, 1000);
      await sleep(400);
      await page.screenshot({ path: join(out, 'mlirbc-editor.png') });
      await page.mouse.move(5, 5);
      await page.keyboard.press('Escape');
      // An edit, saved: the file is bytecode again, with the edit in it.
      const before = readFileSync(file);
      // Select the op's name (a double click would stop at the '.'): click at its start, shift-click at its end.
      const box = await clickToken(page, 'stablehlo.maximum', 'stablehlo.maximum');
      await page.mouse.click(box.x + 1, box.y + box.height / 2);
      await page.keyboard.down('Shift');
      await page.mouse.click(box.x + box.width - 1, box.y + box.height / 2);
      await page.keyboard.up('Shift');
      await page.keyboard.insertText('stablehlo.minimum');
      await page.keyboard.press('Control+S');
      const saved = await waitFor('the file rewritten', () => {
        const now = readFileSync(file);
        return now.equals(before) ? null : now;
      });
      if (!saved.subarray(0, 4).equals(MAGIC)) {
        throw new Error(`the saved file is not bytecode: ${saved.subarray(0, 16).toString('hex')}`);
      }
      const read = execFileSync(tool.command, [...tool.args, file], { encoding: 'utf8' });
      if (!read.includes('stablehlo.minimum') || read.includes('stablehlo.maximum')) {
        throw new Error(`${tool.name} reads the saved file as:\n${read.slice(0, 600)}`);
      }
      // A text that does not parse is refused: the file stays as it was, the message says why.
      await page.keyboard.press('Control+End');
      await page.keyboard.insertText('\n%broken = \n');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await page.keyboard.press('Control+S');
      const refusal = await waitFor('the save refused', async () =>
        (await notifications(page)).find((n) => n.includes('not saved as bytecode')), 30_000);
      await page.screenshot({ path: join(out, 'mlirbc-refused.png') });
      if (!readFileSync(file).equals(saved)) {
        throw new Error('the file changed although the save was refused');
      }
      await runCommand(page, 'File: Revert File');
      return `hover with the types and lowered forms (${shown.length} characters); saved: ${saved.length} bytes of bytecode, ` +
        `${tool.name} reads stablehlo.minimum; refused: ${/not saved as bytecode: .*?error: [^)]*/.exec(refusal)?.[0] ?? refusal}`;
    },
  },
  {
    name: "F12 on an op's loc(\"model.py\":4:12) opens model.py at that line",
    async run({ page }) {
      await openFile(page, IMPORTED);
      await clickToken(page, 'model.py', 'loc("model.py"');
      await waitFor('model.py open at line 4', async () => {
        await page.keyboard.press('F12');
        await sleep(1000);
        const tab = (await page.locator('.part.editor .tab.active').first().textContent()) ?? '';
        const at = await cursor(page);
        return tab.includes('model.py') && at?.line === 4 && at.column === 12 ? at : null;
      }, 60_000, 500);
      return 'model.py: Ln 4, Col 12';
    },
  },
];
