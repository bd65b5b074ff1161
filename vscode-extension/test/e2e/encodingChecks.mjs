// `.mlir` files that are not clean UTF-8 text: one with a byte 0xff in a comment (VS Code shows it
// as U+FFFD; the server reads the file's bytes and reports the byte where it is), and one with a
// NUL byte (VS Code takes it for binary; opened anyway, the extension puts it back in MLIR).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openFile, sleep, waitFor } from './workbench.mjs';

const NOT_UTF8 = 'latin1_comment.mlir';
// Line 2 holds the byte: "  // caf\xff" (a Latin-1 é), at column 9.
const NOT_UTF8_BYTES = Buffer.concat([
  Buffer.from('func.func @f(%x: i32) -> i32 {\n  // caf'),
  Buffer.from([0xff]),
  Buffer.from(' (written in Latin-1)\n  return %x : i32\n}\n'),
]);
const NUL = 'nul_byte.mlir';
// A NUL in a comment (valid UTF-8, as MLIR reads it) and one in the code on line 3, which the server reports.
const NUL_BYTES = Buffer.from('// a NUL byte: \0 in a comment\nfunc.func @f(%x: i32) -> i32 {\n  return %x : i32 \0\n}\n');

/** Written before the workbench starts, so that quick open finds them at once. */
export function writeEncodingFiles(workspace) {
  writeFileSync(join(workspace, NOT_UTF8), NOT_UTF8_BYTES);
  writeFileSync(join(workspace, NUL), NUL_BYTES);
}

const mode = async (page) => (await page.locator('[id="status.editor.mode"]').first().textContent())?.trim();

const problemsFilter = (page) => page.locator('.part.panel input[placeholder^="Filter (e.g. text"]').first();

/**
 * The Problems panel's rows of `file` (shown with Ctrl+Shift+M, filtered by `text`: in a full run
 * other files have problems too, and the list draws only the rows in view) that hold `text`.
 */
async function problems(page, file, text) {
  if (!(await page.locator('.part.panel .markers-panel').isVisible().catch(() => false))) {
    await page.keyboard.press('Control+Shift+M');
  }
  const filter = problemsFilter(page);
  if ((await filter.inputValue({ timeout: 2000 }).catch(() => text)) !== text) {
    await filter.fill(text);
    await sleep(300);
  }
  // A file's row, then its problems' rows.
  const rows = (await page.locator('.part.panel .markers-panel .monaco-list-row').allTextContents()).map((r) => r.replace(/\u00a0/g, ' '));
  const mine = rows.findIndex((r) => r.includes(file));
  return mine < 0 ? [] : rows.slice(mine + 1).filter((r) => r.includes(text)).slice(0, 1);
}

/** The Problems panel unfiltered and away again. */
async function closeProblems(page) {
  await problemsFilter(page).fill('', { timeout: 2000 }).catch(() => {});
  await page.keyboard.press('Control+Shift+M');
}

export const encodingChecks = [
  {
    name: 'an .mlir file with a byte that is not UTF-8 opens as MLIR, the byte reported in Problems at its line',
    async run({ page, out }) {
      await openFile(page, NOT_UTF8);
      const language = await waitFor('the MLIR language', async () => ((await mode(page)) === 'MLIR' ? 'MLIR' : null), 30_000)
        .catch(async (e) => {
          throw new Error(`${e.message}; the status bar says ${await mode(page)}`);
        });
      const encoding = (await page.locator('[id="status.editor.encoding"]').first().textContent())?.trim();
      const [row] = await waitFor('the encoding error in the Problems panel', async () => {
        const found = await problems(page, NOT_UTF8, 'invalid UTF-8 byte 0xff');
        return found.length ? found : null;
      }, 90_000, 1000);
      if (!/Ln 2, Col 9/.test(row)) {
        throw new Error(`the Problems panel has: ${row}`);
      }
      const squiggles = await page.locator('.part.editor .squiggly-error').count();
      await sleep(300);
      await page.screenshot({ path: join(out, 'not-utf8.png') });
      await closeProblems(page);
      return `language ${language}, encoding ${encoding}; ${squiggles} error marker(s); Problems: ${row.slice(0, 160)}`;
    },
  },
  {
    name: 'an .mlir file with a NUL byte, which VS Code takes for binary, opens anyway as MLIR with diagnostics',
    async run({ page, out }) {
      // Quick open, as openFile does, without waiting for a text editor: VS Code may show its binary placeholder.
      const input = page.locator('.quick-input-widget input');
      await waitFor(`${NUL} in quick open`, async () => {
        await page.keyboard.press('Control+P');
        await input.waitFor({ state: 'visible' });
        await input.fill(NUL);
        const listed = await waitFor('listed', async () =>
          (await page.locator('.quick-input-list .monaco-list-row').first().textContent())?.includes(NUL), 8_000).catch(() => false);
        if (!listed) await page.keyboard.press('Escape');
        return listed;
      }, 60_000, 500);
      await page.keyboard.press('Enter');
      const anyway = page.locator('.part.editor').getByText('Open Anyway').first();
      const placeholder = await anyway.waitFor({ state: 'visible', timeout: 15_000 }).then(() => true, () => false);
      let steps = 'opened as text at once';
      if (placeholder) {
        await page.screenshot({ path: join(out, 'nul-byte-binary.png') });
        await anyway.click();
        // VS Code asks which editor: the text editor.
        const textEditor = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Text Editor' }).first();
        const asked = await textEditor.waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, () => false);
        if (asked) await textEditor.click();
        steps = `binary placeholder, Open Anyway${asked ? ', Text Editor' : ''}`;
      }
      const language = await waitFor('the MLIR language', async () => ((await mode(page)) === 'MLIR' ? 'MLIR' : null), 30_000)
        .catch(async (e) => {
          throw new Error(`${e.message}; ${steps}; the status bar says ${await mode(page)}`);
        });
      // The server reads it: the NUL in the code is an error on line 3 (the one in the comment is not).
      const [row] = await waitFor('the NUL reported in the Problems panel', async () => {
        const found = await problems(page, NUL, 'unexpected character');
        return found.length ? found : null;
      }, 90_000, 1000);
      if (!/Ln 3,/.test(row)) {
        throw new Error(`the Problems panel has: ${row}`);
      }
      await sleep(300);
      await page.screenshot({ path: join(out, 'nul-byte.png') });
      await closeProblems(page);
      return `${steps}; language ${language}; Problems: ${row.slice(0, 120)}`;
    },
  },
];
