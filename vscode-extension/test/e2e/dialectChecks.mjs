// Dialects mlirtext does not ship: a user dialect defined in an IRDL file that the setting
// `mlirtext.dialects` names (its ops verify by their constraints, hover shows their summaries),
// and an invented dialect (its ops kept and checked structurally, one warning, navigation working).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clickToken, cursor, editUserSettings, openFile, sleep, tokenBox, waitFor } from './workbench.mjs';

const IRDL = 'dialects/geo.irdl.mlir';
const GEO_USES = 'geo_uses.mlir';
const GEO_USES_TEXT = `func.func @distances(%a: !geo.point<f32>, %b: !geo.point<f64>) -> f32 {
  %d = "geo.distance"(%a, %a) {unit = #geo.unit<"m">} : (!geo.point<f32>, !geo.point<f32>) -> f32
  %e = "geo.distance"(%a, %b) {unit = #geo.unit<"m">} : (!geo.point<f32>, !geo.point<f64>) -> f32
  return %d : f32
}
`;
// The summary of geo.distance: the comment above its definition in tests/irdl/geo.irdl.mlir.
const SUMMARY = 'The distance between two points of the same type, in a unit.';
const CONSTRAINT = "expected '!geo.point<f32>' but got '!geo.point<f64>'";

const ACME = 'acme_widgets.mlir';
const ACME_TEXT = `// acme is a dialect nobody defined: its ops are kept and checked structurally.
func.func @widgets(%n: index) -> i32 {
  %w = "acme.widget"(%n) {size = 3 : i64} : (index) -> i32
  %g = "acme.gadget"(%w, %w) : (i32, i32) -> i32
  %s = arith.addi %g, %w : i32
  return %s : i32
}
`;

/** Written before the workbench starts, so that quick open finds them at once. */
export function writeDialectFiles(repo, workspace) {
  mkdirSync(join(workspace, 'dialects'), { recursive: true });
  copyFileSync(join(repo, 'tests/irdl/geo.irdl.mlir'), join(workspace, IRDL));
  writeFileSync(join(workspace, GEO_USES), GEO_USES_TEXT);
  writeFileSync(join(workspace, ACME), ACME_TEXT);
}

const markers = (page, kind) => page.locator(`.part.editor .squiggly-${kind}`).count();

/** The hover's text over `token` on the line holding `line`, once it has `want` (hovered again until then). */
async function hoverText(page, token, line, want, timeoutMs = 60_000) {
  const hover = page.locator('.monaco-hover:not(.hidden)').first();
  return waitFor(`a hover over ${token} with "${want}"`, async () => {
    await page.mouse.move(5, 5);
    await sleep(150);
    const box = await tokenBox(page, token, line);
    await page.mouse.move(box.x + 20, box.y + box.height / 2);
    await hover.waitFor({ state: 'visible', timeout: 5000 }).catch(() => {});
    const t = ((await hover.textContent({ timeout: 1000 }).catch(() => '')) ?? '').replace(/\u00a0/g, ' ');
    return t.includes(want) ? t : null;
  }, timeoutMs, 1000);
}

export const dialectChecks = [
  {
    name: 'a user dialect from the mlirtext.dialects setting: hover shows its summary, a broken use its constraint',
    async run({ page, settings, out }) {
      // Without the setting, geo is a dialect nobody defined: one warning. (The file is opened
      // first so that the server starts from the run's settings, not while settings.json is saved.)
      await openFile(page, GEO_USES);
      await waitFor('the unregistered-dialect warning', async () =>
        (await markers(page, 'warning')) === 1 && (await markers(page, 'error')) === 0, 60_000);
      await editUserSettings(page, { ...settings, 'mlirtext.dialects': ['dialects'] });
      await openFile(page, GEO_USES);
      // One error, on the use of mixed points; the dialect is known, so no "unregistered" warning.
      await waitFor('one error marker and no warning', async () =>
        (await markers(page, 'error')) === 1 && (await markers(page, 'warning')) === 0, 60_000);
      const broken = await hoverText(page, 'geo.distance', '%e = "geo.distance"', CONSTRAINT);
      const text = await hoverText(page, 'geo.distance', '%d = "geo.distance"', SUMMARY);
      if (text.includes(CONSTRAINT)) {
        throw new Error('the valid use shows the constraint\'s error too');
      }
      await sleep(400); // the hover fades in
      await page.screenshot({ path: join(out, 'user-dialect-hover.png') });
      await page.mouse.move(5, 5);
      await editUserSettings(page, settings);
      return `hover: "${SUMMARY}"; broken use: ${broken.slice(broken.indexOf('expected'), broken.indexOf("f64>'") + 5)}`;
    },
  },
  {
    name: 'an invented dialect: only the one warning, no error, and F12 on a value its op defines',
    async run({ page, workspace }) {
      await openFile(page, ACME);
      const counts = await waitFor('one warning marker', async () => {
        const c = { warning: await markers(page, 'warning'), error: await markers(page, 'error') };
        return c.warning === 1 ? c : null;
      }, 60_000);
      await sleep(1000); // anything more the server has to say
      const warning = await hoverText(page, 'acme.widget', '%w = "acme.widget"', "unregistered dialect 'acme'");
      const after = { warning: await markers(page, 'warning'), error: await markers(page, 'error') };
      if (counts.error !== 0 || after.warning !== 1 || after.error !== 0) {
        throw new Error(`markers: ${JSON.stringify(after)}`);
      }
      await page.mouse.move(5, 5);
      await page.keyboard.press('Escape');
      const defLine = readFileSync(join(workspace, ACME), 'utf8').split('\n').findIndex((l) => l.includes('%w = ')) + 1;
      await clickToken(page, '%w', '%s = arith.addi');
      const before = await cursor(page);
      await page.keyboard.press('F12');
      const landed = await waitFor(`the cursor on line ${defLine}`, async () => {
        const c = await cursor(page);
        return c && c.line === defLine ? c : null;
      });
      const message = warning.slice(warning.indexOf("unregistered dialect 'acme'")).split('\n')[0].slice(0, 80);
      return `1 warning (${message}...), 0 errors; F12 on %w: Ln ${before.line} -> Ln ${landed.line}`;
    },
  },
];
