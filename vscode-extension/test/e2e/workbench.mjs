// Helpers that drive the VS Code workbench in the page: open a file, find a token on
// screen, read the cursor position, the output panel and webviews. Selectors are
// scoped to `.part.editor` / `.part.panel` (newer builds add a chat panel with its own
// `.view-lines`).

const EDITOR = '.part.editor .monaco-editor:not(.embedded-editor)';
// The group with focus (settings.json opens there: beside the MLP when a view in the second group had it).
const ACTIVE_GROUP = '.part.editor .editor-group-container.active';

export async function sleep(ms) {
  await new Promise((r) => setTimeout(r, ms));
}

/** Poll `fn` until it returns a truthy value; the last value (or error) explains a timeout. */
export async function waitFor(what, fn, timeoutMs = 30_000, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}` + (last ? ` (last: ${String(last).slice(0, 300)})` : ''));
}

/**
 * Run a command from the palette by its exact title (clicked, so a longer title that sorts first is not
 * taken); `suffix`, a regular expression, matches what some titles add (the remote's name, say).
 */
export async function runCommand(page, title, suffix = '') {
  const input = page.locator('.quick-input-widget input');
  // F1 can be lost while focus moves (out of a webview's frame, say): open the palette again until it shows.
  await waitFor('the command palette', async () => {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: 3000 });
    await input.fill(`>${title}`, { timeout: 3000 });
    return true;
  }, 20_000, 300);
  const row = page.locator('.quick-input-list .monaco-list-row', {
    has: page.locator('.label-name', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${suffix}$`) }),
  });
  await waitFor(`"${title}" in the command palette`, async () => (await row.count()) > 0, 15_000).catch(async (e) => {
    const shown = await page.locator('.quick-input-list .monaco-list-row .label-name').allTextContents();
    throw new Error(`${e.message}; the palette shows: ${shown.slice(0, 6).join(' | ')}`);
  });
  await row.first().click();
}

export async function openFile(page, name) {
  // Quick open lists a file a check has just written only once the file watcher has seen it,
  // and keeps the list it showed: close it and ask again.
  const input = page.locator('.quick-input-widget input');
  const firstRow = page.locator('.quick-input-list .monaco-list-row').first();
  await waitFor(`${name} in quick open`, async () => {
    await page.keyboard.press('Control+P');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    const shown = await waitFor(`${name} listed`, async () => (await firstRow.textContent())?.includes(name), 8_000)
      .catch(() => false);
    if (!shown) await page.keyboard.press('Escape');
    return shown;
  }, 60_000, 500);
  await page.keyboard.press('Enter');
  await waitFor(`${name} open in the editor`, async () =>
    (await page.locator(`${ACTIVE_GROUP} .tab.active`).first().textContent())?.includes(name),
  );
  await page.locator(`${EDITOR} .view-lines`).first().waitFor({ state: 'visible' });
}

/** The editor's visible lines as plain text (the rendering uses non-breaking spaces); `editor` picks one of several. */
export async function editorLines(page, editor = EDITOR) {
  return page.evaluate((sel) => {
    const lines = [...document.querySelectorAll(`${sel} .view-lines .view-line`)];
    return lines
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text);
  }, editor);
}

/**
 * Where `token` is drawn on the first visible line containing `lineHas` (default:
 * the token itself), found with a DOM Range over the line's text, and the colour of
 * the span that draws its first character.
 */
export async function tokenBox(page, token, lineHas = token, occurrence = 0) {
  return page.evaluate(
    ({ sel, token, lineHas, occurrence }) => {
      for (const line of document.querySelectorAll(`${sel} .view-lines .view-line`)) {
        const text = line.textContent.replace(/\u00a0/g, ' ');
        if (!text.includes(lineHas)) continue;
        let at = -1;
        for (let i = 0; i <= occurrence; i++) at = text.indexOf(token, at + 1);
        if (at < 0) continue;
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        let offset = 0;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const len = node.textContent.length;
          if (at < offset + len) {
            const range = document.createRange();
            range.setStart(node, at - offset);
            range.setEnd(node, Math.min(len, at - offset + token.length));
            const r = range.getBoundingClientRect();
            const span = node.parentElement;
            return { x: r.left, y: r.top, width: r.width, height: r.height, color: getComputedStyle(span).color };
          }
          offset += len;
        }
      }
      return null;
    },
    { sel: EDITOR, token, lineHas, occurrence },
  );
}

/** Click in the middle of a token's first characters: puts the cursor there. */
export async function clickToken(page, token, lineHas, occurrence = 0) {
  const box = await waitFor(`"${token}" on screen`, () => tokenBox(page, token, lineHas, occurrence));
  await page.mouse.click(box.x + Math.min(box.width / 2, 6), box.y + box.height / 2);
  return box;
}

/** The hover's text over `op` on the line holding `line` once it has each of `want` (hovered again until then). */
export async function hoverOverOp(page, op, line, want) {
  const hover = page.locator('.monaco-hover:not(.hidden)').first();
  return waitFor(`a hover with ${want.join(', ')}`, async () => {
    // Away first, until the last hover is gone: a hover drawn over the line would stay open
    // under the mouse and be read as this op's.
    await page.mouse.move(5, 5);
    await hover.waitFor({ state: 'hidden', timeout: 3000 }).catch(() => {});
    const box = await tokenBox(page, op, line);
    await page.mouse.move(box.x + 20, box.y + box.height / 2);
    await hover.waitFor({ state: 'visible', timeout: 5000 }).catch(() => {});
    const t = ((await hover.textContent({ timeout: 1000 }).catch(() => '')) ?? '').replace(/\u00a0/g, ' ');
    const missing = want.filter((s) => !t.includes(s));
    if (process.env.E2E_DEBUG) console.log(`  hover: ${t.length} characters, missing ${missing.join(', ') || 'nothing'}`);
    return missing.length === 0 ? t : null;
  }, 120_000, 1000);
}

/** Open the code action menu at the cursor and choose the action titled `title`. */
export async function chooseCodeAction(page, title) {
  // The first Ctrl+. is sometimes lost: ask again until the menu shows the action. Each Ctrl+.
  // cancels the request before it, and on a loaded machine the server can take longer than a
  // short wait to answer (a file just opened is analysed first): each try waits longer.
  const menu = page.locator('.action-widget').first();
  let wait = 4000;
  await waitFor(`the code action menu with "${title}"`, async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Period');
    const shown = await menu.waitFor({ state: 'visible', timeout: wait }).then(() => true, () => false);
    wait = Math.min(2 * wait, 20_000);
    return shown && (await menu.textContent())?.includes(title);
  }, 90_000, 500);
  // Clicks on the menu are swallowed by an overlay in 1.100: move with the keys.
  await waitFor(`"${title}" focused`, async () => {
    const focused = await page.locator('.action-widget .monaco-list-row.focused').first().textContent().catch(() => '');
    if (focused?.includes(title)) return true;
    await page.keyboard.press('ArrowDown');
    return false;
  }, 15_000, 150);
  await page.keyboard.press('Enter');
}

/** "mlirtext: ready" once the status bar says so (the language server answers requests from then on). */
export async function serverReady(page, timeoutMs = 90_000) {
  const status = page.locator('.part.statusbar .statusbar-item', { hasText: /mlirtext: / }).first();
  return waitFor('"mlirtext: ready" in the status bar', async () => {
    const text = (await status.textContent())?.trim();
    return text === 'mlirtext: ready' ? text : null;
  }, timeoutMs, 500);
}

/** The cursor as the status bar shows it: {line, column}, 1-based. */
export async function cursor(page) {
  const text = await page.locator('[id="status.editor.selection"]').first().textContent();
  const m = /Ln (\d+), Col (\d+)/.exec(text ?? '');
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

/** The text of the output panel's editor. */
export async function panelText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.part.panel .view-lines .view-line')]
      .sort((a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0))
      .map((l) => l.textContent.replace(/\u00a0/g, ' '))
      .join('\n'),
  );
}

/** The frame of an open webview whose document holds `selector` now, or null (webviews nest two iframes deep). */
export async function frameWith(page, selector) {
  for (const frame of page.frames()) {
    try {
      if (await frame.$(selector)) return frame;
    } catch {
      // a frame navigating meanwhile
    }
  }
  return null;
}

/** The frame of a webview whose document holds `selector`, once there is one. */
export async function webviewFrame(page, selector) {
  return waitFor(`a webview with ${selector}`, () => frameWith(page, selector), 90_000, 500);
}

export async function notifications(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notifications-toasts .notification-toast, .notification-list-item')].map((n) =>
      n.textContent.replace(/\u00a0/g, ' '),
    ),
  );
}

/**
 * Replace the user settings through the settings.json editor, as a user would: the
 * workbench applies them at once (a write to the file from outside is not always
 * noticed by code-server's file watcher on a loaded machine).
 */
export async function editUserSettings(page, settings) {
  await editSettingsJson(page, settings, 'Preferences: Open User Settings (JSON)');
}

/**
 * Replace the remote's settings (code-server's Machine settings) the same way. The extension host runs
 * on the remote: a change to a machine-scoped setting such as `mlirtext.server.path` in the user
 * settings does not reach it (VS Code keeps those for local windows); in the remote's it does.
 */
export async function editRemoteSettings(page, settings) {
  await editSettingsJson(page, settings, 'Preferences: Open Remote Settings (JSON)', ' \\(.+\\)');
}

async function editSettingsJson(page, settings, command, suffix = '') {
  await runCommand(page, command, suffix);
  await waitFor('settings.json in the editor', async () =>
    (await page.locator(`${ACTIVE_GROUP} .tab.active`).first().textContent())?.includes('settings.json'),
  );
  const editor = `${ACTIVE_GROUP} .monaco-editor:not(.embedded-editor)`;
  await page.locator(`${editor} .view-lines`).first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  // One line, typed at once (the run's settings turn auto-closing and auto-indent off).
  await page.keyboard.insertText(JSON.stringify(settings));
  const typed = (await editorLines(page, editor)).join('').trim();
  if (typed !== JSON.stringify(settings)) {
    throw new Error(`settings.json reads: ${typed.slice(0, 200)}`);
  }
  await page.keyboard.press('Control+S');
  await waitFor('settings.json saved', async () => (await page.locator(`${ACTIVE_GROUP} .tab.active.dirty`).count()) === 0);
  await runCommand(page, 'View: Close Editor');
}

/** Screenshots `STEM-dark.png` (the theme the checks run in) and `STEM-light.png` into `dir`, then back to dark. */
export async function screenshotBothThemes(page, dir, stem) {
  const { join } = await import('node:path');
  await page.screenshot({ path: join(dir, `${stem}-dark.png`) });
  for (const [theme, kind] of [['Light Modern', 'vs'], ['Dark Modern', 'vs-dark']]) {
    await runCommand(page, 'Preferences: Color Theme');
    await page.locator('.quick-input-widget input').fill(theme);
    await sleep(500);
    await page.keyboard.press('Enter');
    await waitFor(`the ${theme} theme`, async () => (await page.locator(`.monaco-workbench.${kind}`).count()) > 0);
    if (kind === 'vs') {
      await sleep(1000);
      await page.screenshot({ path: join(dir, `${stem}-light.png`) });
    }
  }
}
