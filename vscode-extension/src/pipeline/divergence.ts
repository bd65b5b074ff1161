/**
 * What the pipeline view marks after "Find where @f's numbers diverge": the guilty pass (in the
 * pass times and the pass explorer), its level (in the chart and the level's column) and a banner
 * with the error value. Made from the server's `mlirtext.bisect` answer. Pure.
 */
import { BisectResult } from '../debugging/results';
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
