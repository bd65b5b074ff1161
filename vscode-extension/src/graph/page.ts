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
  styleUri: string;
  /** The model (out/src/graph/model.js), ELK's API (elk-api.js: 10 KB, it lays out in the
   * worker), ELK's worker, the whole of ELK (1.6 MB, loaded only where no worker starts), and
   * the view's script. */
  modelUri: string;
  /** The bisect's marks and the origin lines (out/src/graph/marks.js). */
  marksUri: string;
  elkApiUri: string;
  elkWorkerUri: string;
  elkBundledUri: string;
  scriptUri: string;
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
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${ctx.cspSource} data:; style-src ${ctx.cspSource} 'unsafe-inline'; script-src 'nonce-${ctx.nonce}'; worker-src blob:; connect-src ${ctx.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeXml(ctx.styleUri)}">
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
<script nonce="${ctx.nonce}" src="${escapeXml(ctx.modelUri)}"></script>
<script nonce="${ctx.nonce}" src="${escapeXml(ctx.marksUri)}"></script>
<script nonce="${ctx.nonce}" src="${escapeXml(ctx.elkApiUri)}"></script>
<script nonce="${ctx.nonce}" src="${escapeXml(ctx.scriptUri)}"></script>
</body>
</html>`;
}
