/**
 * What the graph view draws over the graph besides its colouring: the ops a bisect found
 * diverging ("Find where @f's numbers diverge": the guilty pass's ops, or the dispatch a device
 * computes differently), and the origin lines between the two panes of the beside view.
 * Pure, with no runtime imports: the webview loads this file as it is compiled, after model.js
 * (its `exports` are the page's); the extension and the unit tests import it.
 */
import type { BisectResult } from '../debugging/results';
import type { DispatchInfo, LevelGraph } from './model';

/** A bisect's finding as the graph view marks it. */
export interface GraphDivergence {
  function: string;
  /** The legend's line: the pass (or the dispatch) to blame and by how much. */
  summary: string;
  /** The source ops to blame: where each starts ([line, character], 0-based) and its name. */
  ops: { start: [number, number]; op: string }[];
  /** A bisect across devices: the first dispatch the device gets wrong, with where the source
   * ops its kernel was made from start ([line, character], 0-based). */
  dispatch: { device: string; index: number; kernel: string; sources: [number, number][] } | null;
}

/** The marks of a bisect's answer, or undefined when nothing is to blame (or it failed). */
export function graphDivergenceOf(found: BisectResult): GraphDivergence | undefined {
  if (found.error || !found.kind || !found.function) return undefined;
  const d = found.difference;
  const value = d ? ` · max |Δ| ${Number(d.max_abs.toPrecision(3))} · ${d.max_ulp} ulp` : '';
  const dispatch = found.dispatch
    ? {
        device: found.dispatch.device,
        index: found.dispatch.index,
        kernel: found.dispatch.kernel,
        sources: found.dispatch.sources.map((s) => sourceStart(s.at)).filter((p): p is [number, number] => p !== null),
      }
    : null;
  const blamed = dispatch
    ? `dispatch ${dispatch.index} (${dispatch.kernel}) on ${dispatch.device}`
    : `pass ${found.position ?? '?'} of ${found.total ?? '?'}, '${found.pass ?? '?'}' (step to ${found.level ?? '?'})`;
  return {
    function: found.function,
    summary: `✗ ${blamed}, ${found.kind}${value}`,
    ops: (found.markers ?? []).map((m) => ({ start: [m.start[0], m.start[1]], op: m.op })),
    dispatch,
  };
}

/** `file:line:column` (1-based, as a dispatch trace's source ops are) as [line, character], 0-based. */
function sourceStart(at: string): [number, number] | null {
  const parts = at.split(':');
  const line = Number(parts[parts.length - 2]);
  const column = Number(parts[parts.length - 1]);
  return parts.length >= 3 && line >= 1 && column >= 1 ? [line - 1, column - 1] : null;
}

/**
 * The graph nodes to mark: every op made from a source op to blame (at the level written, that
 * op; lowered, what it became), and the ops of the diverging dispatch (its kernel's name, or the
 * source ops its kernel was made from).
 */
export function divergentNodes(graph: LevelGraph, found: GraphDivergence, dispatches: Map<number, DispatchInfo>): string[] {
  const starts = new Set([...found.ops.map((o) => o.start), ...(found.dispatch?.sources ?? [])].map(([l, c]) => `${l}:${c}`));
  const kernel = found.dispatch?.kernel;
  const ids = new Set([...dispatches.values()].filter((d) => d.id !== null && d.name === kernel).map((d) => d.id));
  return graph.nodes
    .filter((n) => n.kind === 'op' &&
      ((n.range && starts.has(`${n.range[0]}:${n.range[1]}`)) || (n.dispatch !== null && ids.has(n.dispatch))))
    .map((n) => n.id);
}

/** A box in the overlay's coordinates. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * An origin line from a node in one pane to one it became in the other: from the side of `from`
 * that faces `to` to the facing side of `to`, a curve that leaves and arrives level.
 */
export function originLinePath(from: Box, to: Box): string {
  const rightward = to.x + to.width / 2 >= from.x + from.width / 2;
  const x0 = rightward ? from.x + from.width : from.x;
  const x1 = rightward ? to.x : to.x + to.width;
  const y0 = from.y + from.height / 2;
  const y1 = to.y + to.height / 2;
  const bend = Math.max(30, Math.abs(x1 - x0) / 2) * (rightward ? 1 : -1);
  const f = (v: number) => v.toFixed(1);
  return `M${f(x0)},${f(y0)} C${f(x0 + bend)},${f(y0)} ${f(x1 - bend)},${f(y1)} ${f(x1)},${f(y1)}`;
}
