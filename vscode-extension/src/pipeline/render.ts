/**
 * The pipeline view's HTML: a summary, a bar of op counts per dialect for each
 * level, the time of each pass, the run result, then the text of every level
 * (side by side, or one at a time). Everything is rendered here from the server's
 * answer; the webview script only switches layouts and follows clicks. Pure.
 */
import { RunResult, clip, formatSeconds } from '../runInputs';
import { escapeHtml, highlightLine, namedDefinitions, opName, sourceLocation } from './highlight';
import {
  PipelineLevel,
  PipelineResult,
  allDialects,
  dialectCounts,
  dialectFamily,
  levelSeconds,
  totalOps,
} from './model';

export interface RenderContext {
  /** The function shown, without @ (undefined for the whole module). */
  fn?: string;
  /** The document's file name, for the title. */
  file: string;
  /** The run of the function on the source level, when it ran (or its error). */
  run?: RunResult;
  /** Webview resource origin and a per-render nonce (the content security policy). */
  cspSource: string;
  nonce: string;
  styleUri: string;
  scriptUri: string;
}

/** A column of the view: a level of the pipeline, or the target code after the llvm level. */
export interface Column {
  id: string;
  title: string;
  text: string;
  detail: string;
  /** The first column is the source: clicking its lines reveals them in the editor. */
  source: boolean;
}

export function columns(result: PipelineResult): Column[] {
  const levels = result.levels ?? [];
  const cols: Column[] = levels.map((level, i) => ({
    id: level.level,
    title: level.level,
    text: level.text,
    detail: `${totalOps(level)} ops` + (i > 0 ? ` · ${formatSeconds(levelSeconds(level))}` : ' · source'),
    source: i === 0,
  }));
  if (result.target) {
    cols.push({ id: 'llvm-ir', title: 'LLVM IR', text: result.target, detail: 'target code', source: false });
  }
  return cols;
}

export function renderPipeline(result: PipelineResult, ctx: RenderContext): string {
  const levels = result.levels ?? [];
  const name = ctx.fn ? `@${ctx.fn}` : 'module';
  const lowering = levels.reduce((a, l) => a + levelSeconds(l), 0);
  const cols = columns(result);
  const path = levels.map((l) => l.level).join(' → ') + (result.target ? ' → LLVM IR' : '');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${ctx.cspSource} data:; style-src ${ctx.cspSource} 'unsafe-inline'; script-src 'nonce-${ctx.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(ctx.styleUri)}">
<title>Pipeline ${escapeHtml(name)}</title>
</head>
<body>
<header class="head">
  <h1><span class="t-sym">${escapeHtml(name)}</span> <span class="file">${escapeHtml(ctx.file)}</span></h1>
  <div class="path" id="path">${escapeHtml(path || 'no levels')}</div>
  <div class="stats">
    <span class="stat"><b>${levels.length}</b> levels</span>
    <span class="stat"><b>${formatSeconds(lowering)}</b> lowering</span>
    ${ctx.run && !ctx.run.error ? `<span class="stat"><b>${formatSeconds(ctx.run.seconds)}</b> run</span>` : ''}
  </div>
</header>
${result.error ? `<div class="error" id="pipeline-error">${escapeHtml(result.error)}</div>` : ''}
<section class="panels">
  <div class="panel" id="op-chart"><h2>Ops per dialect</h2>${renderChart(levels)}</div>
  <div class="panel" id="pass-times"><h2>Time per pass</h2>${renderPassTimes(levels)}</div>
  <div class="panel" id="run-result"><h2>Run</h2>${renderRun(ctx.run)}</div>
</section>
<nav class="bar">
  <span class="mode">
    <button id="mode-side" class="on" data-mode="side">Side by side</button>
    <button id="mode-step" data-mode="step">Stepped</button>
  </span>
  <span class="steps">${cols
    .map((c, i) => `<button class="step fam-${familyOfLevel(c.id)}" data-col="${i}">${escapeHtml(c.title)}</button>`)
    .join('')}</span>
  <span class="hint">click an op: its named values in every level, and the source line in the editor</span>
</nav>
<main class="levels side" id="levels">
${cols.map((c, i) => renderColumn(c, i)).join('\n')}
</main>
<script nonce="${ctx.nonce}" src="${escapeHtml(ctx.scriptUri)}"></script>
</body>
</html>`;
}

function familyOfLevel(level: string): string {
  return level === 'llvm-ir' ? 'llvm' : level;
}

export function renderChart(levels: PipelineLevel[]): string {
  if (levels.length === 0) {
    return '<p class="muted">no levels</p>';
  }
  const max = Math.max(1, ...levels.map(totalOps));
  const rows = levels
    .map((level) => {
      const total = totalOps(level);
      const segments = dialectCounts(level)
        .map(
          (d) =>
            `<span class="seg fam-${dialectFamily(d.dialect)}" style="width:${((100 * d.count) / max).toFixed(2)}%" ` +
            `title="${escapeHtml(`${d.dialect}: ${d.count} ops`)}">${d.count >= max / 12 ? escapeHtml(d.dialect) : ''}</span>`,
        )
        .join('');
      return `<div class="row" data-level="${escapeHtml(level.level)}"><span class="lvl">${escapeHtml(level.level)}</span><span class="track">${segments}</span><span class="num">${total}</span></div>`;
    })
    .join('');
  const legend = allDialects(levels)
    .map((d) => `<span class="key"><i class="fam-${dialectFamily(d)}"></i>${escapeHtml(d)}</span>`)
    .join('');
  return `<div class="chart">${rows}</div><div class="legend">${legend}</div>`;
}

export function renderPassTimes(levels: PipelineLevel[]): string {
  const passes = levels.flatMap((l) => (l.passes ?? []).map((p) => ({ level: l.level, ...p })));
  if (passes.length === 0) {
    return '<p class="muted">no passes ran (the input is already at the lowest level)</p>';
  }
  const max = Math.max(...passes.map((p) => p.seconds), 1e-9);
  return `<table class="passes">${passes
    .map(
      (p) =>
        `<tr><td class="lvl">${escapeHtml(p.level)}</td><td class="pass">${escapeHtml(p.pass)}</td>` +
        `<td class="timebar"><span class="fam-${familyOfLevel(p.level)}" style="width:${((100 * p.seconds) / max).toFixed(2)}%"></span></td>` +
        `<td class="num">${formatSeconds(p.seconds)}</td></tr>`,
    )
    .join('')}</table>`;
}

export function renderRun(run: RunResult | undefined): string {
  if (!run) {
    return '<p class="muted">not run</p>';
  }
  if (run.error) {
    return `<p class="error">${escapeHtml(run.error)}</p>`;
  }
  const outs = (run.outputs ?? [])
    .map((o, i) => `<div class="value"><span class="muted">result[${i}]</span> <code>${escapeHtml(clip(o, 300))}</code></div>`)
    .join('');
  return `<p class="muted">random inputs (seed 0), reference interpreter, source level</p>${outs}<p><b>${formatSeconds(run.seconds)}</b></p>`;
}

export function renderColumn(col: Column, index: number): string {
  const lines = col.text.replace(/\n$/, '').split('\n');
  const body = lines
    .map((line, n) => {
      const defs = namedDefinitions(line);
      const loc = sourceLocation(line);
      const op = opName(line);
      const attrs =
        (defs.length ? ` data-defs="${escapeHtml(defs.join(' '))}"` : '') +
        (loc ? ` data-loc="${loc}"` : '') +
        (op ? ` data-op="${escapeHtml(op)}"` : '');
      return `<div class="ln${op ? ' op' : ''}" data-line="${n}"${attrs}>${highlightLine(line) || ' '}</div>`;
    })
    .join('');
  return `<article class="level fam-border-${familyOfLevel(col.id)}" data-col="${index}" data-level="${escapeHtml(col.id)}"${col.source ? ' data-source="1"' : ''}>
<h3><span class="name">${escapeHtml(col.title)}</span><span class="detail">${escapeHtml(col.detail)}</span></h3>
<pre class="code">${body}</pre>
</article>`;
}

/** Shown while the server works, and when it cannot answer. */
export function renderMessage(title: string, message: string, ctx: Pick<RenderContext, 'cspSource' | 'styleUri'>): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${ctx.cspSource} 'unsafe-inline';">
<link rel="stylesheet" href="${escapeHtml(ctx.styleUri)}"></head>
<body><header class="head"><h1>${escapeHtml(title)}</h1></header><p class="message">${escapeHtml(message)}</p></body></html>`;
}
