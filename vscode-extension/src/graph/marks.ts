/**
 * What the graph view draws over the graph besides its colouring: the ops a bisect found
 * diverging ("Find where @f's numbers diverge": the guilty pass's ops, or the dispatch a device
 * computes differently), and the origin lines between the two panes of the beside view.
 * Pure, with no runtime imports: the webview loads this file as it is compiled, after model.js
 * (its `exports` are the page's); the extension and the unit tests import it.
 */
import type { BisectResult } from '../debugging/results';
import type { LevelGraph } from './model';

/** A bisect's finding as the graph view marks it. */
export interface GraphDivergence {
  function: string;
  /** The legend's line: the pass and the dispatch to blame, and by how much. */
  summary: string;
  /** The source ops to blame: where each starts ([line, character], 0-based) and its name. */
  ops: { start: [number, number]; op: string }[];
  /** The dispatch a device gets wrong (a bisect across devices), for the legend's line; its ops are
   * marked by its source ops (among `ops`), not by its kernel's name: the compiled module's kernels
   * (fused further) are not the graph's dispatches of the same name. */
  dispatch: { device: string; index: number; kernel: string } | null;
}

/** The marks of a bisect's answer, or undefined when nothing is to blame (or it failed). */
export function graphDivergenceOf(found: BisectResult): GraphDivergence | undefined {
  const dispatch = found.dispatch ?? null;
  const pass = found.kind && found.pass ? found.pass : null;
  if (found.error || !found.function || (!pass && !dispatch)) return undefined;
  const parts: string[] = [];
  if (pass) {
    parts.push(`pass ${found.position ?? '?'} of ${found.total ?? '?'}, '${pass}' (step to ${found.level ?? '?'}), ` +
      `${found.kind}${errorValue(found.difference)}`);
  }
  if (dispatch) {
    parts.push(`dispatch ${dispatch.index} (${dispatch.kernel}) on ${dispatch.device} differs${errorValue(dispatch.difference)}`);
  }
  return {
    function: found.function,
    summary: `✗ ${parts.join('; ')}`,
    ops: (found.markers ?? []).map((m) => ({ start: [m.start[0], m.start[1]], op: m.op })),
    dispatch: dispatch && { device: dispatch.device, index: dispatch.index, kernel: dispatch.kernel },
  };
}

function errorValue(d: { max_abs: number; max_ulp: number } | null | undefined): string {
  return d ? ` · max |Δ| ${Number(d.max_abs.toPrecision(3))} · ${d.max_ulp} ulp` : '';
}

/**
 * The graph nodes to mark: every op made from a source op to blame (at the level written, that
 * op; lowered, what it became); for a bisect across devices these are the diverging dispatch's.
 */
export function divergentNodes(graph: LevelGraph, found: GraphDivergence): string[] {
  const starts = new Set(found.ops.map((o) => `${o.start[0]}:${o.start[1]}`));
  return graph.nodes.filter((n) => n.kind === 'op' && n.range && starts.has(`${n.range[0]}:${n.range[1]}`)).map((n) => n.id);
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
