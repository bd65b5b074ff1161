/**
 * The pipeline view's HTML: a summary, a bar of op counts per dialect for each
 * level, the time of each pass, the run on each device, the profile, the pass
 * explorer (passes.ts), then the text of every level (side by side, or one at a
 * time) and the target column (each kernel's code for the target picked in its select). Everything is rendered here from the
 * server's answers; the webview script only switches layouts and targets, follows
 * clicks and puts in the device runs when they arrive after the levels. Pure.
 */
import { DeviceRun, DeviceRunsResult, formatDiff, speedup } from '../devices';
import { clip, formatSeconds } from '../runInputs';
import { escapeHtml, highlightLine, namedDefinitions, opName } from './highlight';
import { Divergence, DispatchDivergence, divergenceMark, isGuilty, renderDispatchDivergence, renderDivergence } from './divergence';
import { renderPassExplorer } from './passes';
import { renderProfile } from './profile';
import {
  PipelineLevel,
  PipelineResult,
  ProfileResult,
  TargetCode,
  TargetCodeResult,
  TargetKernel,
  allDialects,
  dialectCounts,
  dialectFamily,
  kernelSummary,
  levelSeconds,
  totalOps,
} from './model';

export interface RenderContext {
  /** The function shown, without @ (undefined for the whole module). */
  fn?: string;
  /** The document's file name, for the title. */
  file: string;
  /** The function's runs on each device, when they are done before the levels (else they come later). */
  devices?: DeviceRunsResult;
  /** The profile of its run, when done before the levels (else it comes later). */
  profile?: ProfileResult;
  /** The target column's content when the levels came without it: 'pending' (it comes later) or the answer. */
  targets?: TargetCodeResult | 'pending';
  /** Where the last "Find where @f's numbers diverge" found them diverging: marked on its pass and level. */
  divergence?: Divergence;
  /** The dispatch it found a device getting wrong (with devices checked): a banner and its profile row. */
  dispatch?: DispatchDivergence;
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
  /** Per line of `text`: the document line (0-based) of the source op the op there came from. */
  origins: (number | null)[];
}

export function columns(result: PipelineResult): Column[] {
  const levels = result.levels ?? [];
  const cols: Column[] = levels.map((level, i) => ({
    id: level.level,
    title: level.level,
    text: level.text,
    detail: `${totalOps(level)} ops` + (i > 0 ? ` · ${formatSeconds(levelSeconds(level))}` : ' · source'),
    source: i === 0,
    origins: level.origins ?? [],
  }));
  if (result.target) {
    cols.push({ id: 'llvm-ir', title: 'LLVM IR', text: result.target, detail: 'target code', source: false, origins: [] });
  }
  return cols;
}

export function renderPipeline(result: PipelineResult, ctx: RenderContext): string {
  const levels = result.levels ?? [];
  const name = ctx.fn ? `@${ctx.fn}` : 'module';
  const lowering = levels.reduce((a, l) => a + levelSeconds(l), 0);
  const cols = columns(result);
  const targets: TargetCodeResult | 'pending' | undefined = result.targets?.length ? result : ctx.targets;
  const steps = cols.map((c) => ({ title: c.title, family: familyOfLevel(c.id) }));
  if (targets) {
    steps.push({ title: 'targets', family: 'llvm' });
  }
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
  </div>
</header>
${result.error ? `<div class="error" id="pipeline-error">${escapeHtml(result.error)}</div>` : ''}
${renderDivergence(ctx.divergence)}
${renderDispatchDivergence(ctx.dispatch)}
<section class="panels">
  <div class="panel" id="op-chart"><h2>Ops per dialect</h2>${renderChart(levels, ctx.divergence)}</div>
  <div class="panel" id="pass-times"><h2>Time per pass</h2>${renderPassTimes(levels, ctx.divergence)}</div>
  <div class="panel" id="device-runs"><h2>Run on each device</h2><div class="body">${renderDeviceRuns(ctx.devices)}</div></div>
  <div class="panel" id="profile"><h2>Profile</h2><div class="body">${renderProfile(ctx.profile, ctx.dispatch)}</div></div>
</section>
${renderPassExplorer(result.steps, ctx.divergence)}
<nav class="bar">
  <span class="mode">
    <button id="mode-side" class="on" data-mode="side">Side by side</button>
    <button id="mode-step" data-mode="step">Stepped</button>
  </span>
  <span class="steps">${steps
    .map((c, i) => `<button class="step fam-${c.family}" data-col="${i}">${escapeHtml(c.title)}</button>`)
    .join('')}</span>
  <span class="hint">click an op: the source op it came from and what that became at every level, and its line in the editor</span>
</nav>
<main class="levels side" id="levels">
${cols.map((c, i) => renderColumn(c, i, ctx.divergence)).join('\n')}
${targets ? renderTargetColumn(targets, cols.length) : ''}
</main>
<script nonce="${ctx.nonce}" src="${escapeHtml(ctx.scriptUri)}"></script>
</body>
</html>`;
}

function familyOfLevel(level: string): string {
  return level === 'llvm-ir' ? 'llvm' : level;
}

export function renderChart(levels: PipelineLevel[], divergence?: Divergence): string {
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
      const guilty = divergence?.level === level.level;
      return `<div class="row${guilty ? ' guilty' : ''}" data-level="${escapeHtml(level.level)}"><span class="lvl">${escapeHtml(level.level)}${guilty ? divergenceMark(divergence, true) : ''}</span><span class="track">${segments}</span><span class="num">${total}</span></div>`;
    })
    .join('');
  const legend = allDialects(levels)
    .map((d) => `<span class="key"><i class="fam-${dialectFamily(d)}"></i>${escapeHtml(d)}</span>`)
    .join('');
  return `<div class="chart">${rows}</div><div class="legend">${legend}</div>`;
}

export function renderPassTimes(levels: PipelineLevel[], divergence?: Divergence): string {
  const passes = levels.flatMap((l) => (l.passes ?? []).map((p) => ({ level: l.level, ...p })));
  if (passes.length === 0) {
    return '<p class="muted">no passes ran (the input is already at the lowest level)</p>';
  }
  const max = Math.max(...passes.map((p) => p.seconds), 1e-9);
  return `<table class="passes">${passes
    .map((p) => {
      const guilty = divergence && isGuilty(divergence, p.level, p.pass);
      return (
        `<tr${guilty ? ' class="guilty"' : ''} data-level="${escapeHtml(p.level)}" data-pass="${escapeHtml(p.pass)}">` +
        `<td class="lvl">${escapeHtml(p.level)}</td><td class="pass">${escapeHtml(p.pass)}${guilty ? ` ${divergenceMark(divergence)}` : ''}</td>` +
        `<td class="timebar"><span class="fam-${familyOfLevel(p.level)}" style="width:${((100 * p.seconds) / max).toFixed(2)}%"></span></td>` +
        `<td class="num">${formatSeconds(p.seconds)}</td></tr>`
      );
    })
    .join('')}</table>`;
}

/**
 * The function on each device with the same inputs: the time (median after a warm-up),
 * how much faster than the reference, and whether the outputs match the reference's
 * (with the largest difference). `undefined`: still running.
 */
export function renderDeviceRuns(result: DeviceRunsResult | undefined): string {
  if (!result) {
    return '<p class="muted pending">running on reference, local-sync and local-task…</p>';
  }
  if (result.error) {
    return `<p class="error">${escapeHtml(result.error)}</p>`;
  }
  const runs = result.runs ?? [];
  const reference = runs.find((r) => r.device === 'reference' && !r.error);
  const rows = runs.map((r) => renderDeviceRow(r, reference)).join('');
  const first = reference?.outputs?.[0] ?? runs.find((r) => r.outputs?.length)?.outputs?.[0];
  return (
    `<table class="devices">${rows}</table>` +
    (first ? `<div class="value"><span class="muted">result[0]</span> <code>${escapeHtml(clip(first, 200))}</code></div>` : '') +
    '<p class="muted small">random inputs (seed 0), the same on every device; time: median of several calls after a warm-up</p>'
  );
}

function renderDeviceRow(run: DeviceRun, reference: DeviceRun | undefined): string {
  const name = `<td class="dev">${escapeHtml(run.device)}</td>`;
  if (run.error && run.seconds === undefined) {
    return `<tr class="device" data-device="${escapeHtml(run.device)}" data-match="error">${name}<td colspan="3" class="error">${escapeHtml(clip(run.error, 300))}</td></tr>`;
  }
  let verdict: string;
  let state: string;
  if (run.device === 'reference') {
    verdict = '<span class="muted">reference</span>';
    state = 'reference';
  } else if (run.match) {
    verdict = `<span class="ok">✓ matches</span> <span class="muted">max |Δ| ${formatDiff(run.max_diff)}</span>`;
    state = 'yes';
  } else {
    verdict = `<span class="bad">✗ differs</span> <span class="muted">${run.error ? escapeHtml(run.error) : `max |Δ| ${formatDiff(run.max_diff)}`}</span>`;
    state = 'no';
  }
  const faster = speedup(run, reference);
  const compiled = run.compile_seconds ? ` title="compiled in ${formatSeconds(run.compile_seconds)}"` : '';
  return (
    `<tr class="device" data-device="${escapeHtml(run.device)}" data-match="${state}">${name}` +
    `<td class="num"${compiled}>${formatSeconds(run.seconds)}</td>` +
    `<td class="num muted">${faster}</td><td>${verdict}</td></tr>`
  );
}

export function renderColumn(col: Column, index: number, divergence?: Divergence): string {
  const lines = col.text.replace(/\n$/, '').split('\n');
  const body = lines
    .map((line, n) => {
      const defs = namedDefinitions(line);
      const origin = col.origins[n];
      const op = opName(line);
      const attrs =
        (defs.length ? ` data-defs="${escapeHtml(defs.join(' '))}"` : '') +
        (typeof origin === 'number' ? ` data-origin="${origin}"` : '') +
        (op ? ` data-op="${escapeHtml(op)}"` : '');
      return `<div class="ln${op ? ' op' : ''}" data-line="${n}"${attrs}>${highlightLine(line) || ' '}</div>`;
    })
    .join('');
  const guilty = divergence?.level === col.id;
  return `<article class="level fam-border-${familyOfLevel(col.id)}${guilty ? ' guilty' : ''}" data-col="${index}" data-level="${escapeHtml(col.id)}"${col.source ? ' data-source="1"' : ''}>
<h3><span class="name">${escapeHtml(col.title)}</span>${guilty ? divergenceMark(divergence) : ''}<span class="detail">${escapeHtml(col.detail)}</span></h3>
<pre class="code">${body}</pre>
</article>`;
}

/** The target column; its content (`renderTargets`) is replaced when the answer comes later. */
export function renderTargetColumn(targets: TargetCodeResult | 'pending', index: number): string {
  return `<article class="level targets fam-border-llvm" data-col="${index}" data-level="targets">${renderTargets(targets)}</article>`;
}

/**
 * The target column's content: a select of the targets and, for the one selected (the
 * first at first), each kernel with its entry point, launch, size, how it is made and its
 * code. A kernel's header is a clickable op line whose origin is its first source op's
 * line. A target without code says why.
 */
export function renderTargets(answer: TargetCodeResult | 'pending'): string {
  if (answer === 'pending' || answer.error || !answer.targets?.length) {
    const why =
      answer === 'pending'
        ? '<p class="muted pending">compiling for each target…</p>'
        : `<p class="error">${escapeHtml(answer.error ?? 'no targets')}</p>`;
    return `<h3><span class="name">target</span><span class="detail">each kernel's code</span></h3><div class="target-body">${why}</div>`;
  }
  const targets: TargetCode[] = answer.targets;
  const options = targets
    .map((t, i) => `<option value="${escapeHtml(t.target)}"${i === 0 ? ' selected' : ''}>${escapeHtml(t.target)}${t.error ? ' (no code)' : ''}</option>`)
    .join('');
  let line = 0;
  const sections = targets
    .map((t, i) => {
      const about = t.error
        ? `<p class="error">${escapeHtml(t.error)}</p>`
        : `<p class="muted summary">${t.kernels.length} kernel${t.kernels.length === 1 ? '' : 's'} · ${escapeHtml(t.code_name)}` +
          `${t.arch ? ` for ${escapeHtml(t.arch)}` : ''} · ${formatSeconds(t.seconds)}</p>`;
      const kernels = t.kernels.map((k) => renderKernel(k, line++)).join('');
      return `<section class="target-code" data-target="${escapeHtml(t.target)}"${i === 0 ? '' : ' hidden'}>${about}${kernels}</section>`;
    })
    .join('\n');
  return `<h3><span class="name">target <select id="target-select" aria-label="target">${options}</select></span><span class="detail">each kernel's code</span></h3>
<div class="target-body">${sections}</div>`;
}

function renderKernel(kernel: TargetKernel, line: number): string {
  const origin = kernel.lines.length ? ` data-origin="${kernel.lines[0]}"` : '';
  const dispatch = kernel.dispatch === null ? '' : `dispatch ${kernel.dispatch} · `;
  const code = kernel.code
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `<div class="ln">${escapeHtml(l) || ' '}</div>`)
    .join('');
  return (
    `<div class="kernel" data-kernel="${escapeHtml(kernel.name)}">` +
    `<div class="ln op kernel-head" data-line="${line}"${origin} data-op="kernel">` +
    `<b>${escapeHtml(kernel.name)}</b> <span class="muted">${dispatch}${escapeHtml(kernelSummary(kernel))}</span></div>` +
    `<div class="impl muted">${escapeHtml(kernel.implementation)}</div>` +
    `<pre class="code">${code}</pre></div>`
  );
}

/** Shown while the server works, and when it cannot answer. */
export function renderMessage(title: string, message: string, ctx: Pick<RenderContext, 'cspSource' | 'styleUri'>): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${ctx.cspSource} 'unsafe-inline';">
<link rel="stylesheet" href="${escapeHtml(ctx.styleUri)}"></head>
<body><header class="head"><h1>${escapeHtml(title)}</h1></header><p class="message">${escapeHtml(message)}</p></body></html>`;
}
