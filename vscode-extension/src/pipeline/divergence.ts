/**
 * What the pipeline view marks after "Find where @f's numbers diverge": the guilty pass (in the
 * pass times and the pass explorer), its level (in the chart and the level's column) and a banner
 * with the error value; with devices checked, the first dispatch a device gets wrong (a banner
 * with its kernel and source ops, a click on one reveals it in the text, and its row of the
 * profile). Made from the server's `mlirtext.bisect` answer. Pure.
 */
import { BisectResult, DispatchFound } from '../debugging/results';
import { escapeHtml } from './highlight';

export interface Divergence {
  /** 'diverged', 'crashed', 'does not verify', 'failed'. */
  kind: string;
  /** The pass as the pipeline names it (`canonicalize`, without its options). */
  pass: string;
  /** As bisect spells it (`canonicalize{max-num-rewrites=-1}`). */
  spelling: string;
  /** The level its step lowers to. */
  level: string;
  position: number;
  total: number;
  message: string;
  /** The error value in a few words: `max |Δ| 0.0113 · 94832 ulp`, or the kind. */
  value: string;
}

/** The divergence a bisect found, or undefined when no pass is to blame (or it failed). */
export function divergenceOf(found: BisectResult | undefined): Divergence | undefined {
  if (!found?.kind || !found.pass || !found.level) {
    return undefined;
  }
  const d = found.difference;
  return {
    kind: found.kind,
    pass: found.pass.split('{')[0],
    spelling: found.pass,
    level: found.level,
    position: found.position ?? 0,
    total: found.total ?? 0,
    message: found.message ?? '',
    value: d ? `max |Δ| ${formatNumber(d.max_abs)} · ${d.max_ulp} ulp` : found.kind,
  };
}

function formatNumber(x: number): string {
  return Number.isFinite(x) ? Number(x.toPrecision(3)).toString() : String(x);
}

/** Whether a pass of the lowering, `pass` (its name) in the step to `level`, is the guilty one. */
export function isGuilty(d: Divergence | undefined, level: string | null | undefined, pass: string | null | undefined): boolean {
  return !!d && level === d.level && pass === d.pass;
}

/** The marker beside the guilty pass or level; `short`: the ✗ alone (the value in its tooltip). */
export function divergenceMark(d: Divergence, short = false): string {
  const text = short ? '✗' : `✗ ${escapeHtml(d.kind)} · ${escapeHtml(d.value)}`;
  return `<span class="guilty-mark" title="${escapeHtml(`${d.spelling}, ${d.kind}: ${d.value}`)}">${text}</span>`;
}

/** The banner above the panels: which pass of which step, and by how much. */
export function renderDivergence(d: Divergence | undefined): string {
  if (!d) {
    return '';
  }
  return (
    `<div class="divergence" id="divergence" data-level="${escapeHtml(d.level)}" data-pass="${escapeHtml(d.pass)}">` +
    `<b>✗ pass ${d.position} of ${d.total}, ${escapeHtml(d.spelling)} (step to ${escapeHtml(d.level)}), ${escapeHtml(d.kind)}</b>` +
    ` <span class="value">${escapeHtml(d.value)}</span><div class="muted">${escapeHtml(d.message)}</div></div>`
  );
}

/** The dispatch a bisect across devices found differing, as the view marks it. */
export interface DispatchDivergence {
  device: string;
  index: number;
  total: number;
  /** `FUNCTION#INDEX`: the profile's row. */
  name: string;
  kernel: string;
  value: string;
  ops: { op: string; line: number }[];
}

/** The dispatch a bisect found differing on a device, or undefined (none checked, all agree, an error). */
export function dispatchDivergenceOf(found: BisectResult | undefined): DispatchDivergence | undefined {
  const d: DispatchFound | undefined = found?.error ? undefined : found?.dispatch;
  if (!d) {
    return undefined;
  }
  return {
    device: d.device,
    index: d.index,
    total: d.total,
    name: d.name,
    kernel: d.kernel,
    value: `max |Δ| ${formatNumber(d.difference.max_abs)} · ${d.difference.max_ulp} ulp`,
    ops: d.ops,
  };
}

/** The dispatch's banner: which dispatch on which device, its kernel, by how much, and its source ops (each revealed in the text on a click). */
export function renderDispatchDivergence(d: DispatchDivergence | undefined): string {
  if (!d) {
    return '';
  }
  const first = d.ops.length ? ` data-origin="${d.ops[0].line}"` : '';
  const ops = d.ops
    .map((o) => `<li class="source-op" data-origin="${o.line}" title="reveal it in the text">${escapeHtml(o.op)} <span class="muted">line ${o.line + 1}</span></li>`)
    .join('');
  return (
    `<div class="divergence" id="dispatch-divergence" data-dispatch="${escapeHtml(d.name)}" data-device="${escapeHtml(d.device)}">` +
    `<b class="dispatch-head"${first}>✗ dispatch ${d.index} of ${d.total} (${escapeHtml(d.name)}) on ${escapeHtml(d.device)}, kernel @${escapeHtml(d.kernel)}, differs from the reference</b>` +
    ` <span class="value">${escapeHtml(d.value)}</span>` +
    `<div class="muted">fed the reference's inputs; its source ops:</div><ul class="source-ops">${ops}</ul></div>`
  );
}

/** The ✗ beside the dispatch's row of the profile (the device and the value in its tooltip). */
export function dispatchMark(d: DispatchDivergence): string {
  return `<span class="guilty-mark" title="${escapeHtml(`on ${d.device}, kernel @${d.kernel}: ${d.value}`)}">✗ ${escapeHtml(d.device)}</span>`;
}
