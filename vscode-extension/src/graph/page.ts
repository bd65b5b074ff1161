/**
 * The graph view's page: the toolbar and the panes; the script (media/graph/graph.js) draws
 * the graph into them from the messages the extension posts. Pure.
 */
import { escapeXml } from './model';

export interface PageContext {
  fn: string;
  file: string;
  cspSource: string;
  nonce: string;
  /** The page's own files, put in it (see PageAssets). */
  assets: PageAssets;
  /** ELK's worker (1.6 MB, fetched by the page and started from a blob) and the whole of ELK
   * (as much, loaded only where no worker starts). */
  elkWorkerUri: string;
  elkBundledUri: string;
}

/**
 * The text of the page's own files, written into it: a webview loads each file it names through
 * its service worker and the workbench (a round trip to the extension host's disk), and shows the
 * page, and hands it the messages posted to it, only once every one is loaded.
 */
export interface PageAssets {
  style: string;
  /** The model (out/src/graph/model.js) and the bisect's marks and the origin lines (marks.js). */
  model: string;
  marks: string;
  /** ELK's API (elk-api.js: 10 KB; it lays out in the worker). */
  elkApi: string;
  /** The view's script (media/graph/graph.js). */
  script: string;
}

/** A script element with `code` in it: no `</script` or `<!--` in it ends or bends the element
 * (in a string, a regular expression or a comment, `<\/` and `<\!` read as `</` and `<!`). */
export function inlineScript(nonce: string, code: string): string {
  return `<script nonce="${nonce}">${code.replace(/<(\/script|!--)/gi, (_, rest: string) => `<\\${rest}`)}</script>`;
}

/** The arguments of the server's `mlirtext.graph` command. */
export function graphCommandArguments(uri: string, fn: string, levels: string[], profile: string | null,
  dispatches: boolean): unknown[] {
  return [uri, fn, levels, profile, dispatches];
}

export function renderGraphPage(ctx: PageContext): string {
  const boot = JSON.stringify({ elkWorker: ctx.elkWorkerUri, elkBundled: ctx.elkBundledUri }).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<script nonce="${ctx.nonce}">window.pageMarks = { head: performance.now() };</script>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${ctx.cspSource} data:; style-src ${ctx.cspSource} 'unsafe-inline'; script-src 'nonce-${ctx.nonce}'; worker-src blob:; connect-src ${ctx.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>${ctx.assets.style.replace(/<\/style/gi, '<\\/style')}</style>
<title>Graph @${escapeXml(ctx.fn)}</title>
</head>
<body>
<header class="bar">
  <h1><span class="sym">@${escapeXml(ctx.fn)}</span> <span class="file">${escapeXml(ctx.file)}</span></h1>
  <label>level <select id="level-0" data-pane="0"></select></label>
  <label>beside <select id="level-1" data-pane="1"><option value="">none</option></select></label>
  <label>colour <select id="overlay">
    <option value="dialect">dialect</option>
    <option value="dispatch">dispatch</option>
    <option value="profile">time (profile)</option>
    <option value="none">none</option>
  </select></label>
  <label>group <select id="grouping">
    <option value="regions">by region</option>
    <option value="dispatches">by dispatch</option>
  </select></label>
  <span class="buttons">
    <button id="open-all" title="Open every region">open all</button>
    <button id="close-all" title="Close every region">close all</button>
    <button id="zoom-in" title="Zoom in">+</button>
    <button id="zoom-out" title="Zoom out">−</button>
    <button id="fit" title="The whole width">fit</button>
    <button id="profile" title="Per-op time from a dispatch trace (mlirtext run --trace-dispatches DIR)">profile…</button>
  </span>
  <span id="status" class="status">asking the server…</span>
</header>
<div id="divergence" class="divergence" hidden></div>
<div id="legend" class="legend"></div>
<div id="message" class="message" hidden></div>
<main id="panes" class="panes">
  <section class="pane" data-pane="0"><div class="pane-title"></div><svg class="graph" xmlns="http://www.w3.org/2000/svg"><g class="world"></g></svg></section>
  <section class="pane" data-pane="1" hidden><div class="pane-title"></div><svg class="graph" xmlns="http://www.w3.org/2000/svg"><g class="world"></g></svg></section>
  <svg id="origin-lines" class="origin-lines" xmlns="http://www.w3.org/2000/svg"></svg>
</main>
<script nonce="${ctx.nonce}" id="boot" type="application/json">${boot}</script>
<script nonce="${ctx.nonce}">window.exports = {};</script>
${[ctx.assets.model, ctx.assets.marks, ctx.assets.elkApi, ctx.assets.script].map((code) => inlineScript(ctx.nonce, code)).join('\n')}
</body>
</html>`;
}
