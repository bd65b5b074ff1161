// The end-to-end checks, in order; each returns a short detail or throws.
// They share one workbench: the MLP example stays open from the first check on.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytecodeChecks } from './bytecodeChecks.mjs';
import { dialectChecks } from './dialectChecks.mjs';
import { findMlpDivergence } from './divergence.mjs';
import { encodingChecks } from './encodingChecks.mjs';
import { graphChecks } from './graphChecks.mjs';
import { testingChecks } from './testingChecks.mjs';
import {
  chooseCodeAction,
  clickToken,
  cursor,
  editRemoteSettings,
  editUserSettings,
  editorLines,
  frameWith,
  hoverOverOp,
  notifications,
  openFile,
  panelText,
  runCommand,
  screenshotBothThemes,
  serverReady,
  sleep,
  tokenBox,
  waitFor,
  webviewFrame,
} from './workbench.mjs';

const MLP = 'mlp_stablehlo.mlir';
// Known inputs and the output they give: relu(0.5*0.25*8 - 0.5) = 0.5; 0.5*0.125*16 + 1 = 2.
const MLP_INPUTS = '4x8xf32=0.5; 8x16xf32=0.25; 16xf32=-0.5; 16x4xf32=0.125; 4xf32=1';
const MLP_OUTPUT = 'result[0]: 4x4xf32=[2 2 2 2][2 2 2 2][2 2 2 2][2 2 2 2]';
const LEVELS = ['hlo', 'tosa', 'linalg', 'loops', 'llvm', 'llvm-ir', 'targets'];
// What each target's kernel code holds (the target column shows the targets whose tools the machine has).
const TARGET_CODE = {
  'llvm-cpu': 'define void @mlp_dispatch_0(',
  cuda: '.visible .entry mlp_dispatch_',
  rocm: '.amdhsa_kernel mlp_dispatch_',
  'vulkan-spirv': 'OpEntryPoint GLCompute %main "mlp_dispatch_',
  'opencl-spirv': 'OpEntryPoint Kernel %',
};

// A file as someone typed it, and lines of it as `mlirtext format` lays it out (tests/test_format.py).
const MESSY = `!vec = tensor<4xf32>
// the function
func.func @f(%a: !vec,%b :!vec) -> !vec {   // signature
        // before the add
  %sum = arith.addf %a,%b : !vec      // the sum
  cf.br ^next(%sum : !vec)
^next(%q: !vec):   // the block
      return %q : !vec
      // last in the region
}
`;
const FORMATTED_LINES = [
  'func.func @f(%a: !vec, %b: !vec) -> !vec {  // signature',
  '  // before the add',
  '  %sum = arith.addf %a, %b : !vec  // the sum',
  '^next(%q: !vec):  // the block',
  '  return %q : !vec',
  '  // last in the region',
];

// Markdown notes with an MLIR fence: the op inside is coloured by the injected MLIR grammar,
// the same op named in the prose is not. Written before the workbench starts (quick open lists it).
const NOTES = 'mlir_notes.md';
const NOTES_TEXT = `# Notes on the MLP

Prose that names stablehlo.add stays prose.

\`\`\`mlir
  %2 = stablehlo.add %1, %bias : tensor<4x16xf32>
\`\`\`
`;

// The same line in a .mlir file of its own (earlier checks lower and save the MLP's file).
const FENCE_SOURCE = 'fence_source.mlir';
const FENCE_SOURCE_TEXT = `func.func @f(%1: tensor<4x16xf32>, %bias: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %2 = stablehlo.add %1, %bias : tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
`;

/** The hover's text over the MLP's first stablehlo.add once it has each of `want` (hovered again until then). */
function hoverOverAdd(page, want) {
  return hoverOverOp(page, 'stablehlo.add', '%2 = stablehlo.add', want);
}

/** The pipeline view of the MLP's @mlp, opened from the palette with the cursor on its first add. */
async function showPipeline(page) {
  await openFile(page, MLP);
  await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
  await runCommand(page, 'mlirtext: Show Pipeline');
  return webviewFrame(page, 'article.level');
}

/**
 * The pipeline view's frame once it holds `selector`: the view the checks before left open, or
 * (a check run alone) the MLP's, opened here.
 */
async function pipelineFrame(page, selector) {
  if (!(await frameWith(page, 'article.level'))) {
    await showPipeline(page);
  }
  return webviewFrame(page, selector);
}

export function writeMarkdownFiles(workspace) {
  writeFileSync(join(workspace, NOTES), NOTES_TEXT);
  writeFileSync(join(workspace, FENCE_SOURCE), FENCE_SOURCE_TEXT);
}

export const checks = [
  {
    name: 'mlir file opens in the MLIR language',
    async run({ page }) {
      await openFile(page, MLP);
      const mode = await waitFor('the language in the status bar', async () => {
        const t = await page.locator('[id="status.editor.mode"]').first().textContent();
        return t?.trim() === 'MLIR' ? t.trim() : null;
      });
      return `language: ${mode}`;
    },
  },
  {
    name: 'highlighting colours tokens by kind',
    async run({ page }) {
      const line = '%2 = stablehlo.add';
      // Tokenizing runs in a worker: the text is drawn in one colour first, then with the
      // grammar's colours, then the server's semantic tokens recolour some. Wait for colours.
      const sample = async () => ({
        op: (await tokenBox(page, 'stablehlo.add', line))?.color,
        value: (await tokenBox(page, '%0', line))?.color,
        type: (await tokenBox(page, 'tensor', line))?.color,
        comment: (await tokenBox(page, 'A two-layer', 'A two-layer'))?.color,
        symbol: (await tokenBox(page, '@mlp', 'func.func @mlp'))?.color,
      });
      let colours;
      await waitFor('op, value, type and comment in colours of their own', async () => {
        colours = await sample();
        const { op, value, type, comment } = colours;
        return [op, value, type, comment].every(Boolean) && new Set([op, value, type, comment]).size === 4;
      }).catch((e) => {
        throw new Error(`${e.message}; colours: ${JSON.stringify(colours)}`);
      });
      const distinct = new Set(Object.values(colours));
      return `${distinct.size} colours: ${JSON.stringify(colours)}`;
    },
  },
  {
    name: 'hover over an op leads with its summary and next level, then a link to the pipeline view',
    async run({ page }) {
      // The server answers with what is done so far and lowers the rest in the background: hover
      // again until the next level is there and the link names the levels below it.
      const text = await hoverOverAdd(page, ['Elementwise add', 'Next level', 'tosa.add', '(then linalg, loops, llvm)']);
      const order = ['Elementwise add', 'results:', 'Next level', 'Every level and the target code of @mlp'].map((s) => text.indexOf(s));
      if (order.some((at, i) => at < 0 || (i > 0 && at < order[i - 1]))) {
        throw new Error(`the hover is not summary, next level, link: ${text.slice(0, 400)}`);
      }
      for (const behind of ['linalg.generic', 'scf.for', 'llvm.fadd', 'not computed']) {
        if (text.includes(behind)) throw new Error(`the hover shows ${behind}, which belongs behind the link`);
      }
      // A command link, so the Markdown was trusted for the command.
      const href = await page.locator('.monaco-hover:not(.hidden) a', { hasText: 'Every level and the target code' })
        .first().getAttribute('data-href', { timeout: 5000 });
      if (!href?.startsWith('command:mlirtext.showPipeline?')) {
        throw new Error(`the link is not the pipeline command: ${href}`);
      }
      await sleep(400); // let the hover finish fading in before the screenshot
      const shown = await page.locator('.monaco-hover:not(.hidden)').first().boundingBox();
      return `summary, next level (tosa.add), link to ${decodeURIComponent(href.split('?')[1])}; ${text.length} characters, ` +
        `the box ${Math.round(shown?.height ?? 0)} px high`;
    },
  },
  {
    name: "the hover's link opens the pipeline view with the op marked at every level",
    async run({ page, workspace, out }) {
      await hoverOverAdd(page, ['Every level and the target code']);
      await page.locator('.monaco-hover:not(.hidden) a', { hasText: 'Every level and the target code' }).first().click();
      const frame = await webviewFrame(page, 'article.level');
      const line = readFileSync(join(workspace, MLP), 'utf8').split('\n').findIndex((l) => l.includes('%2 = stablehlo.add'));
      // Marked: every op the add became, at each level where lowering kept it apart (fusion gives an
      // elementwise chain the origin of its last op), and nothing else.
      const marked = await waitFor('the add marked at every level', async () => {
        const got = await frame.$$eval('#levels .ln.op.hl', (els) =>
          els.map((e) => ({ level: e.closest('article').dataset.level, origin: e.dataset.origin, text: e.textContent })));
        return got.some((m) => m.level === 'hlo') && got.some((m) => m.level === 'tosa') ? got : null;
      }, 90_000, 500);
      const unmarked = await frame.$$eval(`#levels .ln.op[data-origin="${line}"]:not(.hl)`, (els) => els.length);
      const source = marked.filter((m) => m.level === 'hlo');
      if (source.length !== 1 || !source[0].text.includes('%2 = stablehlo.add') || marked.some((m) => m.origin !== String(line))
        || !marked.some((m) => m.level === 'tosa' && m.text.includes('tosa.add')) || unmarked) {
        throw new Error(`marked: ${JSON.stringify(marked.slice(0, 8))}; ${unmarked} of its ops not marked`);
      }
      await sleep(500);
      await page.screenshot({ path: join(out, 'hover-link-pipeline.png') });
      const perLevel = [...new Set(marked.map((m) => m.level))].map((l) => `${l} ${marked.filter((m) => m.level === l).length}`);
      // The link of another op of the same function: the view that is there marks it (nothing computed, nothing drawn again).
      await frame.evaluate(() => (window.__keptFromLink = true));
      await hoverOverOp(page, 'stablehlo.maximum', '%h = stablehlo.maximum', ['Every level and the target code']);
      await page.locator('.monaco-hover:not(.hidden) a', { hasText: 'Every level and the target code' }).first().click();
      const maxLine = readFileSync(join(workspace, MLP), 'utf8').split('\n').findIndex((l) => l.includes('%h = stablehlo.maximum'));
      const second = await waitFor('the maximum marked instead', async () => {
        const got = await frame.$$eval('#levels .ln.op.hl', (els) => els.map((e) => e.dataset.origin));
        return got.length && got.every((o) => o === String(maxLine)) ? got : null;
      }, 30_000, 300);
      if (!(await frame.evaluate(() => window.__keptFromLink === true))) {
        throw new Error('the second link drew the view again');
      }
      // Back to the MLP alone, as the checks after this one expect.
      await runCommand(page, 'View: Close All Editors');
      await openFile(page, MLP);
      return `pipeline view of @mlp, line ${line + 1}'s add marked: ${perLevel.join(', ')}; ` +
        `then the maximum's link: ${second.length} ops of line ${maxLine + 1} marked in the same view`;
    },
  },
  {
    name: 'F12 on a value jumps to its definition',
    async run({ page, workspace }) {
      await page.mouse.move(5, 5);
      await page.keyboard.press('Escape');
      const lines = readFileSync(join(workspace, MLP), 'utf8').split('\n');
      const defLine = lines.findIndex((l) => l.includes('%h = stablehlo.maximum')) + 1;
      await clickToken(page, '%h', '%3 = stablehlo.dot_general');
      await serverReady(page);   // (run alone, the server may still be starting: F12 would do nothing)
      const before = await cursor(page);
      await page.keyboard.press('F12');
      const after = await waitFor(`the cursor on line ${defLine}`, async () => {
        const c = await cursor(page);
        return c && c.line === defLine ? c : null;
      });
      return `Ln ${before.line} -> Ln ${after.line}, Col ${after.column}`;
    },
  },
  {
    name: 'Run function on a picked device shows the expected numbers',
    async run({ page }) {
      await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
      await runCommand(page, 'mlirtext: Run Function');
      const input = page.locator('.quick-input-widget input');
      await waitFor('the inputs box', async () => (await input.getAttribute('placeholder'))?.includes('4x8xf32=0'));
      await input.fill(MLP_INPUTS);
      await page.keyboard.press('Enter');
      // Then the device: the setting's default (reference) is offered first; pick a compiled one.
      await waitFor('the device pick', async () => (await input.getAttribute('placeholder'))?.includes('device'));
      await input.fill('local-task');
      await waitFor('local-task first in the pick', async () =>
        (await page.locator('.quick-input-list .monaco-list-row.focused .label-name').first().textContent())?.trim() === 'local-task');
      await page.keyboard.press('Enter');
      const text = await waitFor('the local-task result in the "mlirtext run" output', async () => {
        const t = await panelText(page);
        return t.includes('on local-task') && t.includes(MLP_OUTPUT) ? t : null;
      }, 90_000);
      const time = /time: (.*)/.exec(text)?.[1];
      return `local-task: ${MLP_OUTPUT} in ${time}`;
    },
  },
  {
    name: 'pipeline view renders every level',
    async run({ page }) {
      const frame = await showPipeline(page);
      const levels = await frame.$$eval('article.level', (els) => els.map((e) => e.dataset.level));
      if (JSON.stringify(levels) !== JSON.stringify(LEVELS)) {
        throw new Error(`levels shown: ${levels.join(', ')}; expected ${LEVELS.join(', ')}`);
      }
      const rows = await frame.$$eval('#op-chart .row', (els) => els.map((e) => e.dataset.level));
      const passes = await frame.$$eval('#pass-times tr', (els) => els.length);
      if (rows.length !== 5 || passes < 4) {
        throw new Error(`chart rows ${rows}, ${passes} pass rows`);
      }
      // A click on a named value's op marks the same value at the other levels.
      await frame.click('article[data-level="hlo"] .ln[data-defs="%zero"]');
      const marked = await frame.$$eval('.ln.hl', (els) => els.map((e) => e.closest('article').dataset.level));
      if (marked.length === 0) {
        throw new Error('clicking %zero at hlo marked nothing at the other levels');
      }
      // Stepped: one level at a time, chosen by its button.
      await frame.click('#mode-step');
      await frame.click('.steps button[data-col="1"]');
      const shown = await frame.$$eval('article.level', (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.dataset.level));
      if (JSON.stringify(shown) !== '["tosa"]') {
        throw new Error(`stepped mode on tosa shows: ${shown.join(', ')}`);
      }
      await frame.click('#mode-side');
      return `columns ${levels.join(' ')}; %zero marked in ${marked.join(' ')}`;
    },
  },
  {
    name: 'pipeline view has a target column with each target\'s kernels',
    async run({ page }) {
      const frame = await pipelineFrame(page, '#target-select');
      const targets = await frame.$$eval('#target-select option', (els) => els.map((e) => e.value));
      if (targets[0] !== 'llvm-cpu') {
        throw new Error(`targets offered: ${targets.join(', ')}`);
      }
      const seen = [];
      for (const target of targets) {
        await frame.selectOption('#target-select', target);
        const shown = await frame.$$eval('.target-code', (els) => els.filter((e) => !e.hidden).map((e) => ({
          target: e.dataset.target,
          kernels: [...e.querySelectorAll('.kernel')].map((k) => k.dataset.kernel),
          code: e.querySelector('pre.code')?.textContent ?? '',
          error: e.querySelector('.error')?.textContent ?? '',
        })));
        if (shown.length !== 1 || shown[0].target !== target) {
          throw new Error(`selecting ${target} shows ${JSON.stringify(shown.map((s) => s.target))}`);
        }
        const { kernels, code, error } = shown[0];
        // llvm-cpu runs each matmul with its bias add (and relu) as its epilogue: two kernels.
        if (target === 'llvm-cpu' ? kernels.length !== 2 : kernels.length !== 4 && !error) {
          throw new Error(`${target}: kernels ${kernels.join(', ')}; ${error}`);
        }
        if (kernels.length && !code.includes(TARGET_CODE[target])) {
          throw new Error(`${target}: the first kernel's code does not hold '${TARGET_CODE[target]}': ${code.slice(0, 200)}`);
        }
        seen.push(`${target} ${error ? `(${error.slice(0, 60)})` : `${kernels.length} kernels`}`);
      }
      await frame.selectOption('#target-select', 'llvm-cpu');
      return seen.join('; ');
    },
  },
  {
    name: 'pipeline view shows the run on each device against the reference',
    async run({ page, out }) {
      const frame = await pipelineFrame(page, '#device-runs');
      // The runs come after the levels (a compile, then timed calls): wait for the rows.
      const runs = await waitFor('a row per device', async () => {
        const got = await frame.$$eval('#device-runs tr.device', (els) => els.map((e) =>
          ({ device: e.dataset.device, match: e.dataset.match, text: [...e.cells].map((c) => c.textContent).join(' ') })));
        return got.length === 3 ? got : null;
      }, 90_000);
      const devices = runs.map((r) => r.device).join(' ');
      const native = runs.filter((r) => r.device !== 'reference');
      if (devices !== 'reference local-sync local-task' || native.some((r) => r.match !== 'yes')) {
        throw new Error(`device rows: ${JSON.stringify(runs)}`);
      }
      const result = await frame.$eval('#device-runs .value', (e) => e.textContent);
      if (!/result\[0\]\s*4x4xf32=/.test(result)) {
        throw new Error(`device panel result: ${result}`);
      }
      // The view alone, at full size, for the screenshots in both theme kinds (a click
      // scrolls its column sideways: back to the start of the lines).
      await frame.evaluate(() => [document.getElementById('levels'), ...document.querySelectorAll('pre.code')]
        .forEach((e) => (e.scrollLeft = 0)));
      if (await page.locator('.part.panel').isVisible()) {
        await runCommand(page, 'View: Hide Panel'); // (the run's output, when the checks before ran)
      }
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await frame.evaluate(() => window.scrollTo(0, 0));
      await sleep(500);
      await screenshotBothThemes(page, out, 'pipeline');
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      return runs.map((r) => r.text.replace(/\s+/g, ' ').trim()).join('; ');
    },
  },
  {
    name: 'clicking an op highlights its source op at every level and in the editor',
    async run({ page, workspace }) {
      // (the target column's kernels are marked too: wait for them, run alone)
      const frame = await pipelineFrame(page, '.target-code .kernel');
      const lines = readFileSync(join(workspace, MLP), 'utf8').split('\n');
      const dotLine = lines.findIndex((l) => l.includes('%0 = stablehlo.dot_general')) + 1;
      // The first matmul at tosa came from the first dot_general.
      await frame.click('article[data-level="tosa"] .ln.op:has-text("tosa.matmul")');
      const marked = await frame.$$eval('#levels .ln.hl', (els) =>
        els.map((e) => ({ level: e.closest('article').dataset.level, text: e.textContent })));
      const levels = [...new Set(marked.map((m) => m.level))];
      const source = marked.filter((m) => m.level === 'hlo').map((m) => m.text);
      // (targets: the header of the kernel the first matmul became)
      if (JSON.stringify(levels) !== '["hlo","tosa","linalg","loops","llvm","targets"]' || source.length !== 1
        || !source[0].includes('%0 = stablehlo.dot_general')) {
        throw new Error(`marked: ${JSON.stringify(marked.slice(0, 8))}`);
      }
      // The click scrolled the columns sideways: back to the source column, for the screenshot.
      await frame.evaluate(() => [document.getElementById('levels'), ...document.querySelectorAll('pre.code')]
        .forEach((e) => (e.scrollLeft = 0)));
      await runCommand(page, 'View: Focus First Editor Group');
      const at = await waitFor(`the editor on line ${dotLine}`, async () => {
        const c = await cursor(page);
        return c && c.line === dotLine ? c : null;
      });
      const perLevel = levels.map((l) => `${l} ${marked.filter((m) => m.level === l).length}`).join(', ');
      return `marked ops per level: ${perLevel}; editor at Ln ${at.line}`;
    },
  },
  {
    name: 'pass explorer steps through the passes, each with its diff; unchanged passes hide',
    async run({ page, out }) {
      const frame = await pipelineFrame(page, '#pass-explorer');
      const shown = () => frame.$eval('.px-step:not([hidden])', (e) => ({
        step: Number(e.dataset.step),
        title: e.querySelector('h3 .name').textContent,
        removed: [...e.querySelectorAll('.ln.d-removed')].map((l) => l.textContent),
        added: [...e.querySelectorAll('.ln.d-added')].map((l) => l.textContent),
        none: e.querySelector('.px-none')?.textContent ?? '',
      }));
      const listed = () => frame.$$eval('.px-item', (els) => els.filter((e) => !e.hidden).map((e) => e.querySelector('.px-pass').textContent));
      // The first pass shown is the first that changed the IR: hlo to tosa, each stablehlo op
      // removed beside the tosa ops that replaced it.
      const first = await shown();
      if (!first.title.includes('convert-hlo-to-tosa') || !first.removed.some((l) => l.includes('stablehlo.maximum'))
        || !first.added.some((l) => l.includes('tosa.maximum'))) {
        throw new Error(`first step shown: ${JSON.stringify(first).slice(0, 400)}`);
      }
      const hidden = await listed();
      const onlyChanged = await frame.$$eval('.px-item', (els) =>
        els.filter((e) => !e.hidden).every((e) => e.dataset.changed === '1' || e.classList.contains('input')));
      if (!onlyChanged) {
        throw new Error(`unchanged passes listed while hidden: ${hidden.join(' ')}`);
      }
      // Next: the next pass that changed something (canonicalize changed nothing at tosa).
      await frame.click('#px-next');
      const next = await shown();
      if (next.step <= first.step || next.title.includes('canonicalize') || next.none) {
        throw new Error(`next shows: ${JSON.stringify(next).slice(0, 300)}`);
      }
      // Unchanged passes shown: the list grows, and next from the first pass lands on canonicalize.
      await frame.click('#px-hide-unchanged');
      const all = await listed();
      if (all.length <= hidden.length || !all.includes('canonicalize')) {
        throw new Error(`with unchanged passes: ${all.join(' ')} (hidden: ${hidden.join(' ')})`);
      }
      await frame.click(`.px-item[data-step="${first.step}"]`);
      await frame.click('#px-next');
      const unchanged = await shown();
      if (!unchanged.title.includes('canonicalize') || !unchanged.none.includes('changed nothing')) {
        throw new Error(`after hlo-to-tosa with unchanged passes shown: ${JSON.stringify(unchanged)}`);
      }
      await frame.click('#px-hide-unchanged');
      await frame.click(`.px-item[data-step="${first.step}"]`);
      // Search across the steps.
      await frame.fill('#px-search', 'tosa.matmul');
      const found = await waitFor('search results', async () => (await frame.textContent('#px-found'))?.trim() || null);
      await frame.fill('#px-search', '');
      // Clicking an op in a diff marks its source op and what it became, at every level and step.
      await frame.click('.px-step:not([hidden]) .ln.d-added.op:has-text("tosa.maximum")');
      const marks = await frame.evaluate(() => ({
        levels: [...new Set([...document.querySelectorAll('#levels .ln.hl')].map((l) => l.closest('article').dataset.level))],
        steps: new Set([...document.querySelectorAll('.px-step .ln.hl, .px-step .ln.picked')].map((l) => l.closest('.px-step').dataset.step)).size,
        source: [...document.querySelectorAll('article[data-level="hlo"] .ln.hl')].map((l) => l.textContent),
      }));
      if (!marks.levels.includes('hlo') || !marks.levels.includes('llvm') || marks.steps < 3
        || !marks.source.some((t) => t.includes('stablehlo.maximum'))) {
        throw new Error(`a click on tosa.maximum in the diff marked: ${JSON.stringify(marks)}`);
      }
      // The view alone, scrolled to the explorer, for the screenshots (without the marks).
      await frame.evaluate(() => document.querySelectorAll('.ln.hl, .ln.picked').forEach((l) => l.classList.remove('hl', 'picked')));
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await frame.evaluate(() => document.getElementById('pass-explorer').scrollIntoView());
      await sleep(500);
      await screenshotBothThemes(page, out, 'pass-explorer');
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      await frame.evaluate(() => window.scrollTo(0, 0));
      return `${hidden.length} passes listed (${all.length} with unchanged ones); first ${first.title}: ` +
        `${first.removed.length} removed, ${first.added.length} added; next ${next.title}; 'tosa.matmul': ${found}; ` +
        `a click on tosa.maximum marked levels ${marks.levels.join(' ')} and ${marks.steps} steps`;
    },
  },
  {
    name: 'profile: the table in the pipeline view and each source op\'s share as a code lens',
    async run({ page, out }) {
      const frame = await pipelineFrame(page, '#profile');
      const rows = await waitFor('the profile rows', async () => {
        const got = await frame.$$eval('#profile tr.dispatch', (els) => els.map((e) => e.textContent));
        return got.length ? got : null;
      }, 90_000);
      await runCommand(page, 'View: Focus First Editor Group');
      const lenses = await waitFor('code lenses with the share of run time', async () => {
        const got = await page.locator('.part.editor .codelens-decoration').allTextContents();
        const shares = got.filter((t) => t.includes('of run time'));
        return shares.length ? shares : null;
      }, 30_000);
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      await frame.evaluate(() => document.getElementById('profile').scrollIntoView());
      await sleep(500);
      await screenshotBothThemes(page, out, 'profile-lens');
      await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
      return `${rows.length} dispatch rows; lenses: ${lenses.slice(0, 3).join(' | ')}`;
    },
  },
  {
    name: 'code action finds where the numbers diverge and marks the guilty op, and the pipeline view its pass (and a device\'s dispatch)',
    async run({ page, settings, out }) {
      const hovers = await findMlpDivergence(page, settings);
      // The marker is on the maximum alone: the add's own hover has none.
      if (hovers.add.includes('mlirtext bisect')) {
        throw new Error(`the marker is on the add too: ${hovers.add.slice(0, 300)}`);
      }
      const pass = /'canonicalize[^']*'/.exec(hovers.guilty)?.[0];
      // The pipeline view, opened for the function, marks the guilty pass and its level, with the error value.
      await openFile(page, MLP);
      await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
      await runCommand(page, 'mlirtext: Show Pipeline');
      const frame = await webviewFrame(page, '#divergence');
      const marked = await frame.evaluate(() => ({
        banner: document.getElementById('divergence').textContent,
        rows: [...document.querySelectorAll('#pass-times tr.guilty')].map((r) => `${r.dataset.level}/${r.dataset.pass}`),
        levels: [...document.querySelectorAll('article.level.guilty')].map((a) => a.dataset.level),
        shown: document.querySelector('.px-item.guilty.on .px-pass')?.textContent ?? '',
      }));
      if (!marked.banner.includes('canonicalize') || !marked.banner.includes('max |Δ|')
        || JSON.stringify(marked.rows) !== '["linalg/canonicalize"]' || JSON.stringify(marked.levels) !== '["linalg"]'
        || !marked.shown.startsWith('canonicalize')) {
        throw new Error(`the pipeline view marked: ${JSON.stringify(marked)}`);
      }
      await frame.evaluate(() => document.getElementById('divergence').scrollIntoView());
      await screenshotBothThemes(page, out, 'pipeline-divergence');
      // Across devices: the second kernel made wrong on local-task. The view, still open for @mlp, marks
      // its dispatch (banner, profile row) with its kernel and source ops; a click on one reveals it.
      await runCommand(page, 'View: Focus First Editor Group');
      await editUserSettings(page, { ...settings, 'mlirtext.debug.devices': ['local-task'],
        'mlirtext.debug.faults': ['--debug-wrong-kernel=local-task:mlp_dispatch_2'] });
      await openFile(page, MLP);
      await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
      await chooseCodeAction(page, "Find where @mlp's numbers diverge");
      // (the bisect runs the pipeline's, then compiles the function and runs each dispatch on both devices)
      const onDevice = await waitFor('the dispatch banner', () => webviewFrame(page, '#dispatch-divergence').catch(() => null),
        240_000, 1000);
      const dispatch = await waitFor('the dispatch marked in the banner and the profile', async () => {
        const got = await onDevice.evaluate(() => {
          const banner = document.getElementById('dispatch-divergence');
          return banner && {
            name: banner.dataset.dispatch, device: banner.dataset.device,
            head: banner.querySelector('.dispatch-head').textContent,
            ops: [...banner.querySelectorAll('li.source-op')].map((li) => ({ text: li.textContent, line: Number(li.dataset.origin) })),
            row: document.querySelector('#profile tr.dispatch.guilty')?.dataset.dispatch ?? null,
            passBanner: !!document.getElementById('divergence'),
          };
        }).catch(() => null);
        return got && got.row ? got : null;
      }, 120_000, 1000);
      if (dispatch.name !== 'mlp#1' || dispatch.device !== 'local-task' || dispatch.row !== 'mlp#1' || dispatch.passBanner
        || !dispatch.head.includes('kernel @mlp_dispatch_2') || !dispatch.ops.some((o) => o.text.startsWith('stablehlo.dot_general'))) {
        throw new Error(`the pipeline view marked: ${JSON.stringify(dispatch)}`);
      }
      const last = dispatch.ops[dispatch.ops.length - 1];
      await onDevice.click('#dispatch-divergence li.source-op >> nth=-1');
      await runCommand(page, 'View: Focus First Editor Group');
      await waitFor(`the editor on line ${last.line + 1}`, async () => {
        const c = await cursor(page);
        return c && c.line === last.line + 1 ? c : null;
      });
      await onDevice.evaluate(() => document.getElementById('dispatch-divergence').scrollIntoView());
      await screenshotBothThemes(page, out, 'pipeline-dispatch-divergence');
      await editUserSettings(page, settings);
      await runCommand(page, 'View: Close All Editors');
      return `marker on stablehlo.maximum: ${pass} diverged; the pipeline view marks ${marked.rows[0]}: ` +
        marked.banner.slice(marked.banner.indexOf('max |Δ|')).split('@')[0].trim() +
        `; on local-task it marks dispatch ${dispatch.name} (${dispatch.ops.map((o) => o.text.split(' ')[0]).join(', ')}), ` +
        `a click on ${last.text.split(' ')[0]} put the editor on Ln ${last.line + 1}`;
    },
  },
  ...graphChecks,
  {
    name: 'code action lowers the function to the next level',
    async run({ page, workspace, python }) {
      await runCommand(page, 'View: Close All Editors');
      await openFile(page, MLP);
      const file = join(workspace, MLP);
      const original = readFileSync(file, 'utf8');
      await clickToken(page, 'stablehlo.add', '%2 = stablehlo.add');
      await chooseCodeAction(page, 'Lower @mlp to tosa (next level)');
      await waitFor('tosa ops in place of stablehlo ones', async () => {
        const text = (await editorLines(page)).join('\n');
        return text.includes('tosa.matmul') && !text.includes('stablehlo.');
      }, 60_000);
      await page.keyboard.press('Control+S');
      const saved = await waitFor('the file saved', () => {
        const t = readFileSync(file, 'utf8');
        return t !== original ? t : null;
      });
      if (saved.split('\n')[0] !== original.split('\n')[0]) {
        throw new Error('the comment before the function changed');
      }
      const printed = execFileSync(python, ['-m', 'mlirtext', 'opt', file], { encoding: 'utf8' });
      if (!printed.includes('tosa.') || printed.includes('stablehlo.')) {
        throw new Error(`mlirtext opt of the lowered file:\n${printed.slice(0, 500)}`);
      }
      const ops = new Set(saved.match(/\btosa\.\w+/g));
      return `the file verifies (mlirtext opt); tosa ops: ${[...ops].join(' ')}`;
    },
  },
  {
    name: 'Lower Function to Next Level from the palette (linalg to loops)',
    async run({ page, workspace, python }) {
      const name = 'dense_linalg.mlir';
      const file = join(workspace, name);
      const original = readFileSync(file, 'utf8');
      await openFile(page, name);
      await clickToken(page, 'linalg.matmul', '%xw = linalg.matmul');
      await runCommand(page, 'mlirtext: Lower Function to Next Level');
      await waitFor('scf loops in place of linalg ops', async () => {
        const text = (await editorLines(page)).join('\n');
        return text.includes('scf.for') && !text.includes('linalg.');
      }, 60_000);
      await page.keyboard.press('Control+S');
      const saved = await waitFor('the file saved', () => {
        const t = readFileSync(file, 'utf8');
        return t !== original ? t : null;
      });
      // The comment and the aliases before the function stay as they were.
      if (!saved.startsWith(original.slice(0, original.indexOf('func.func')))) {
        throw new Error('the text before the function changed');
      }
      const printed = execFileSync(python, ['-m', 'mlirtext', 'opt', file], { encoding: 'utf8' });
      if (!printed.includes('scf.for') || !printed.includes('memref.')) {
        throw new Error(`mlirtext opt of the lowered file:\n${printed.slice(0, 500)}`);
      }
      return `the file verifies (mlirtext opt): ${(saved.match(/scf\.for/g) ?? []).length} scf.for, ${(saved.match(/memref\.\w+/g) ?? []).length} memref ops`;
    },
  },
  ...bytecodeChecks,
  ...testingChecks,
  ...dialectChecks,
  {
    name: 'Format Document lays a messy file out, its comments kept where they were',
    async run({ page, workspace }) {
      writeFileSync(join(workspace, 'messy_format.mlir'), MESSY);
      await openFile(page, 'messy_format.mlir');
      // Run alone, this check opens the first .mlir file: the server is still starting, and until
      // it has answered `initialize` VS Code says "There is no formatter": dismiss that and ask again.
      const lines = await waitFor('the formatted text in the editor', async () => {
        await page.keyboard.press('Escape');
        await runCommand(page, 'Format Document');
        await sleep(3000);
        // Saved and read from disk: the editor's lines would include the inlay hints' types.
        await page.keyboard.press('Control+S');
        await sleep(1000);
        const saved = readFileSync(join(workspace, 'messy_format.mlir'), 'utf8').split('\n');
        return saved.includes('  %sum = arith.addf %a, %b : !vec  // the sum') ? saved : null;
      }, 90_000, 1000);
      const missing = FORMATTED_LINES.filter((l) => !lines.includes(l));
      if (missing.length) {
        throw new Error(`not in the saved file: ${JSON.stringify(missing)}; it shows ${JSON.stringify(lines)}`);
      }
      return `${lines.length} lines formatted, the 5 comments where they were`;
    },
  },
  {
    name: 'status bar says the server is ready; an mlir fence in Markdown is coloured like MLIR',
    async run({ page, settings }) {
      await openFile(page, MLP);
      const ready = await serverReady(page);
      // Grammar colours on both sides: the server's semantic tokens recolour ops in .mlir files only.
      // (Edited once the server runs: run alone, an edit before the extension started left it without the server path.)
      await editUserSettings(page, { ...settings, 'editor.semanticHighlighting.enabled': false });
      try {
        await openFile(page, FENCE_SOURCE);
        const line = '%2 = stablehlo.add';
        const mlirOp = await waitFor('the op coloured apart from its value in the .mlir file', async () => {
          const op = (await tokenBox(page, 'stablehlo.add', line))?.color;
          const value = (await tokenBox(page, '%bias', line))?.color;
          return op && value && op !== value ? op : null;
        });
        await openFile(page, NOTES);
        let colours;
        await waitFor('the fenced op coloured as in the .mlir file, the prose not', async () => {
          colours = {
            fence: (await tokenBox(page, 'stablehlo.add', line))?.color,
            value: (await tokenBox(page, '%bias', line))?.color,
            prose: (await tokenBox(page, 'stablehlo.add', 'Prose that'))?.color,
          };
          return colours.fence === mlirOp && colours.prose && colours.prose !== mlirOp && colours.value !== mlirOp;
        }).catch((e) => {
          throw new Error(`${e.message}; the .mlir op is ${mlirOp}, the Markdown shows ${JSON.stringify(colours)}`);
        });
        return `status bar: ${ready}; op ${mlirOp} in ${FENCE_SOURCE} and in the fence, value ${colours.value}, prose ${colours.prose}`;
      } finally {
        await editUserSettings(page, settings);
      }
    },
  },
  ...encodingChecks,
  {
    name: 'server without mlirtext gives the install command',
    async run({ page, run }) {
      // An interpreter that lacks mlirtext: a fresh venv. Changing the setting restarts the server.
      const venv = join(run, 'no-mlirtext-venv');
      const python = join(venv, 'bin/python');
      execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
      await editRemoteSettings(page, { 'mlirtext.server.path': python });
      try {
        const message = await waitFor('the error notification', async () =>
          (await notifications(page)).find((n) => n.includes('cannot import mlirtext')),
        60_000);
        // About the interpreter of the setting (with PYTHONPATH set, it finds mlirtext but not pygls).
        if (!message.includes(`with ${python} (from the mlirtext.server.path setting)`) || !message.includes('-m pip install mlirtext')
          || !message.includes('No module named') && !message.includes('not installed')) {
          throw new Error(`message: ${message}`);
        }
        return message.slice(message.indexOf('mlirtext language server:'), message.indexOf('mlirtext language server:') + 200);
      } finally {
        await editRemoteSettings(page, {});
      }
    },
  },
  {
    name: 'server turned off keeps highlighting and says why commands cannot run',
    async run({ page, settings }) {
      await editUserSettings(page, { ...settings, 'mlirtext.server.enabled': false });
      await runCommand(page, 'Notifications: Clear All Notifications');
      await openFile(page, 'softmax_stablehlo.mlir');
      const line = '%e = stablehlo.exponential';
      const op = await waitFor('the op coloured', async () => (await tokenBox(page, 'stablehlo.exponential', line))?.color);
      const value = (await tokenBox(page, '%shifted', line)).color;
      if (op === value) {
        throw new Error(`op and value share colour ${op} with the server off`);
      }
      await clickToken(page, 'stablehlo.exponential', line);
      await runCommand(page, 'mlirtext: Run Function');
      const message = await waitFor('the notification', async () =>
        (await notifications(page)).find((n) => n.includes('mlirtext.server.enabled')),
      );
      return `op ${op}, value ${value}; ${message.slice(message.indexOf('mlirtext: cannot')).slice(0, 120)}`;
    },
  },
];
