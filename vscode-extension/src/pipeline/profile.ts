/**
 * The profile of a function's run (the server's `mlirtext.profile`): the per-dispatch table
 * of the pipeline view, and the words of the code lens on each source op (its share of the
 * run time, through the dispatches it went into). Pure.
 */
import { formatSeconds } from '../runInputs';
import { DispatchDivergence, dispatchMark } from './divergence';
import { escapeHtml } from './highlight';
import { OpShare, ProfileResult } from './model';

export function formatShare(share: number): string {
  return `${(100 * share).toFixed(1)}%`;
}

/** The code lens over a source op: `⏱ 41.6% of run time · mlp#0, mlp#1`. */
export function shareLabel(op: OpShare): string {
  return `⏱ ${formatShare(op.share)} of run time · ${op.dispatches.join(', ')}`;
}

/**
 * The table: each dispatch (calls, total, median, share, a bar), then the host's part. `undefined`: still running.
 * `guilty`: the dispatch a bisect across devices found differing (its `FUNCTION#INDEX`), marked.
 */
export function renderProfile(result: ProfileResult | undefined, guilty?: DispatchDivergence): string {
  if (!result) {
    return '<p class="muted pending">profiling on local-task…</p>';
  }
  if (result.error) {
    return `<p class="error">${escapeHtml(result.error)}</p>`;
  }
  const rows = result.rows ?? [];
  const bar = (share: number) => `<td class="timebar"><span class="fam-llvm" style="width:${(100 * share).toFixed(2)}%"></span></td>`;
  const body = rows
    .map(
      (r) =>
        `<tr class="dispatch${guilty?.name === r.name ? ' guilty' : ''}" data-dispatch="${escapeHtml(r.name)}"${r.lines.length ? ` data-origin="${r.lines[0]}"` : ''} title="${escapeHtml(
          `@${r.kernel}: ${r.ops.join(', ')}`,
        )}">` +
        `<td class="pass">${escapeHtml(r.name)}${guilty?.name === r.name ? ` ${dispatchMark(guilty)}` : ''}</td><td class="num">${r.calls}</td>` +
        `<td class="num">${formatSeconds(r.total)}</td><td class="num">${formatSeconds(r.median)}</td>` +
        `<td class="num">${formatShare(r.share)}</td>${bar(r.share)}</tr>`,
    )
    .join('');
  const host = result.host_share ?? 0;
  return (
    `<table class="passes profile"><tr class="muted"><td>dispatch</td><td class="num">calls</td><td class="num">total</td>` +
    `<td class="num">median</td><td class="num">share</td><td></td></tr>${body}` +
    `<tr class="host muted"><td>host</td><td></td><td></td><td></td><td class="num">${formatShare(host)}</td>${bar(host)}</tr></table>` +
    `<p class="muted small">${result.calls} call${result.calls === 1 ? '' : 's'} on ${escapeHtml(result.device ?? '')}, ` +
    `${formatSeconds(result.seconds)} each; host: inputs checked, buffers made, results copied. ` +
    `Each source op's share shows over it in the editor.</p>`
  );
}
