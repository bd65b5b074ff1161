// The Testing panel's end-to-end check: a file with a passing and a failing `// -----` chunk
// (expected-error annotations, run as --verify-diagnostics) and a passing and a failing check
// function (run as `mlirtext check`), listed in the Test Explorer, run there; each outcome is
// read from the tree, and the failure shows at its line with expected and actual side by side.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chooseCodeAction, clickToken, editorLines, openFile, runCommand, sleep, waitFor } from './workbench.mjs';

const FILE = 'expected_errors.mlir';
export const TESTS_FILE_TEXT = `// RUN: mlirtext opt --verify-diagnostics --split-input-file %s

func.func @wrong_result(%a: i32) -> f32 {
  // expected-error@+1 {{type of return operand 0 ('i32') doesn't match function result type ('f32')}}
  return %a : i32
}

// -----

func.func @mixed(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{requires the same shape}}
  %0 = "arith.addf"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return %a : tensor<4xf32>
}

// -----

func.func @adds() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}

func.func @adds_wrong() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 5]> : tensor<2xi32>
  func.return
}
`;

const BROKEN = 'broken_types.mlir';
const BROKEN_TEXT = `func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
    return %a : tensor<4xi32>
}
`;

const EXPECTED = {
  'chunk 1 (line 1): 1 expected diagnostic': 'passed',
  'chunk 2 (line 10): 1 expected diagnostic': 'failed',
  '@adds': 'passed',
  '@adds_wrong': 'failed',
};

/** The Test Explorer's rows, top to bottom: label, state (from the state icon's class), and the file a test is in. */
async function explorerRows(page) {
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('.test-explorer .monaco-list-row')]
      .sort((a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0))
      .map((row) => {
        const icon = row.querySelector('.computed-state')?.className ?? '';
        return {
          // A row that has run also shows its duration ("1.2s", "13ms") after the label.
          label: (row.querySelector('.label')?.textContent ?? row.textContent)
            .replace(/\u00a0/g, ' ')
            .trim()
            .replace(/\s*[0-9.]+m?s$/, ''),
          state: /testing-(passed|failed|error|queued|running|skipped|unset)-icon/.exec(icon)?.[1] ?? '',
          expanded: row.getAttribute('aria-expanded'),
          level: Number(row.getAttribute('aria-level') ?? 1),
        };
      }),
  );
  let file = '';
  for (const r of rows) {
    if (r.label.endsWith('.mlir')) file = r.label;
    r.file = r.label.endsWith('.mlir') ? '' : file;
  }
  return rows;
}

/** The Testing view in the side bar (its activity bar icon; a second click would close it). */
async function showTestExplorer(page) {
  const tree = page.locator('.test-explorer').first();
  if (await tree.isVisible().catch(() => false)) return;
  await page.locator('.part.activitybar .action-label[aria-label^="Testing"]').first().click();
  await tree.waitFor({ state: 'visible', timeout: 20_000 });
}

/** The state of the test labelled `label` (its start) in `file`. */
function stateOf(rows, file, label) {
  return rows.find((r) => r.file.endsWith(file) && r.label.startsWith(label))?.state;
}

export const testingChecks = [
  {
    name: 'Testing panel lists a file\'s chunks and check functions, runs them, shows each outcome and the failure\'s diff',
    async run({ page, workspace, out }) {
      writeFileSync(join(workspace, FILE), TESTS_FILE_TEXT);
      await openFile(page, FILE);
      await showTestExplorer(page);
      // The open file is listed at once; expand its node to see its tests.
      const fileRow = page.locator('.test-explorer .monaco-list-row', { hasText: FILE }).first();
      await waitFor(`${FILE} in the Test Explorer`, async () => (await fileRow.count()) > 0, 90_000);
      await waitFor('the file\'s four tests', async () => {
        const rows = await explorerRows(page);
        if (Object.keys(EXPECTED).every((l) => stateOf(rows, FILE, l) !== undefined)) return true;
        const file = rows.find((r) => r.label.includes(FILE));
        if (file && file.expanded !== 'true') {
          await fileRow.click();
          await page.keyboard.press('ArrowRight');
        }
        return false;
      }, 60_000, 1000);
      await runCommand(page, 'Test: Run All Tests');
      const rows = await waitFor('every outcome in the tree', async () => {
        const rows = await explorerRows(page);
        const states = Object.fromEntries(Object.keys(EXPECTED).map((l) => [l, stateOf(rows, FILE, l)]));
        if (process.env.E2E_DEBUG) console.log(`  states: ${JSON.stringify(states)}`);
        return Object.entries(EXPECTED).every(([l, s]) => states[l] === s) ? states : null;
      }, 90_000, 500);
      // The failure at its line: the peek with expected and actual (testing.automaticallyOpenPeekView, set by run.mjs).
      const peek = page.locator('.part.editor .test-output-peek').first();
      await peek.waitFor({ state: 'visible', timeout: 20_000 });
      const peekText = await waitFor('the diff in the peek', async () => {
        const t = ((await peek.textContent()) ?? '').replace(/\u00a0/g, ' ');
        return /was not produced|element \[1\]/.test(t) ? t : null;
      }, 20_000);
      await sleep(800);
      await page.screenshot({ path: join(out, 'testing-panel.png') });
      const shown = /requires the same shape/.test(peekText) ? 'chunk 2\'s unmet annotation' : '@adds_wrong\'s element';
      return `${JSON.stringify(rows)}; the peek shows ${shown}`;
    },
  },
  {
    name: 'code action inserts expected-error for a diagnostic, and the file\'s test then passes',
    async run({ page, workspace }) {
      writeFileSync(join(workspace, BROKEN), BROKEN_TEXT);
      await openFile(page, BROKEN);
      await clickToken(page, 'return', 'return %a : tensor<4xi32>');
      await chooseCodeAction(page, 'Insert expected-error for this diagnostic');
      const lines = await waitFor('the annotation above the line', async () => {
        const lines = await editorLines(page);
        const at = lines.findIndex((l) => l.includes('return %a : tensor<4xi32>'));
        return at > 0 && lines[at - 1].startsWith('    // expected-error@+1 {{use of value') ? lines : null;
      });
      // Listed again after the edit (half a second after typing stops), and it passes as
      // --verify-diagnostics. A run asked for before the new item is listed runs nothing: ask again.
      await showTestExplorer(page);
      let asked = 0;
      await waitFor(`${BROKEN}'s chunk passed in the Test Explorer`, async () => {
        const rows = await explorerRows(page);
        const file = rows.find((r) => r.label.endsWith(BROKEN));
        if (file && file.expanded === 'false') {
          await page.locator('.test-explorer .monaco-list-row', { hasText: BROKEN }).first().click();
          await page.keyboard.press('ArrowRight');
        }
        const state = stateOf(rows, BROKEN, 'chunk 1 (line 1): 1 expected diagnostic');
        if (state === 'passed') return true;
        if (!state || state === 'unset') {
          if (asked++ % 6 === 0) {
            await page.locator('.part.editor .tab', { hasText: BROKEN }).first().click();
            await runCommand(page, 'Test: Run Tests in Current File');
          }
        }
        return false;
      }, 60_000, 500);
      return lines.find((l) => l.includes('expected-error')).trim();
    },
  },
];
