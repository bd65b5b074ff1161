/**
 * The graph view's model: what the server's `mlirtext.graph` answers, what of it is shown
 * (regions and dispatches collapsed or not), cut into sections that ELK lays out one at a
 * time, the ELK input of a section, and the SVG of a laid-out section. Pure, with no imports:
 * the webview loads this file as it is compiled (its `exports` are the page's), and the
 * extension and the unit tests import it.
 *
 * Why sections: ELK's layered layout takes seconds for a few hundred nodes, and a value read
 * far down a long function (a weight, the skip connection of every block) becomes hundreds of
 * dummy nodes. So the shown items, in program order (a topological order), are cut into runs
 * of at most SECTION_NODES nodes; each is laid out alone, the nearest to the viewport first,
 * and stacked top to bottom. A value from another section comes in through a small proxy
 * node named after it (a click on it goes to the op that defines it).
 */

export interface GraphNode {
  id: string;
  kind: 'input' | 'op' | 'output';
  op: string;
  dialect: string;
  label: string;
  /** The id of the op whose region holds it (null at the function's top level). */
  parent: string | null;
  /** How many ops its regions hold. */
  children: number;
  /** [start line, start char, end line, end char], 0-based: the op, or the source op it came from. */
  range: number[] | null;
  dispatch: number | null;
  /** The dispatch is its consumers' (an elementwise producer fused into them). */
  fused?: boolean;
  type: string;
  /** Its share of the profiled run time, when a profile was given. */
  seconds?: number | null;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  value: string;
  type: string;
}

export interface LevelGraph {
  function: string;
  level: string;
  source: boolean;
  nodes: GraphNode[];
  edges: GraphEdge[];
  ops: number;
}

export interface DispatchInfo {
  id: number | null;
  name: string;
  ops: string[];
  lines: number[];
}

export interface GraphResult {
  function?: string;
  levels?: LevelGraph[];
  available?: string[];
  dispatches?: DispatchInfo[];
  dispatch_error?: string | null;
  profile?: { function?: string; device?: string; seconds: number; dispatches: number } | null;
  error?: string | null;
}

export type Overlay = 'dialect' | 'dispatch' | 'profile' | 'none';

/** What the user chose to see: which groups are open, and whether dispatches are one node each. */
export interface ViewState {
  /** Ids of ops with regions shown open (their ops inside them). */
  expanded: Set<string>;
  byDispatch: boolean;
}

/** A node as drawn: an op, an end, a closed group, a whole dispatch, or a proxy of a value from elsewhere. */
export interface Item {
  id: string;
  kind: 'input' | 'op' | 'output' | 'group' | 'dispatch' | 'proxy';
  label: string;
  detail: string;
  /** The graph nodes it stands for (a dispatch: all its ops; a closed group: it and what it holds). */
  members: string[];
  /** The open group it is drawn in (null: the section itself). */
  parent: string | null;
  dialect: string;
  dispatch: number | null;
  range: number[] | null;
  seconds: number | null;
}

export interface ShownEdge {
  id: string;
  source: string;
  target: string;
  value: string;
}

export interface Shown {
  items: Item[];
  edges: ShownEdge[];
  /** Graph node id -> the id of the item that shows it. */
  itemOf: Map<string, string>;
}

/** Most nodes ELK gets at once (proxies and the ops of open groups count). */
export const SECTION_NODES = 48;
/** The first section is smaller: it is what the view waits for when it opens. */
export const FIRST_SECTION_NODES = 20;
/** A function with more ops than this opens with its groups closed. */
export const OPEN_GROUPS_UP_TO = 400;

export const NODE_HEIGHT = 36;
const CHAR_WIDTH = 7;

/** The state a graph opens in: small functions with every group open, large ones closed. */
export function initialState(graph: LevelGraph): ViewState {
  const expanded = new Set<string>();
  if (graph.ops <= OPEN_GROUPS_UP_TO) {
    for (const n of graph.nodes) {
      if (n.children > 0) expanded.add(n.id);
    }
  }
  return { expanded, byDispatch: false };
}

/** The items shown for `state`, and the edges between them (one per value and pair of items). */
export function shownGraph(graph: LevelGraph, state: ViewState): Shown {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const itemOf = new Map<string, string>();
  const items: Item[] = [];
  const itemById = new Map<string, Item>();
  const representative = (n: GraphNode): string => {
    if (state.byDispatch && n.dispatch !== null && n.kind === 'op') {
      return `d${n.dispatch}`;
    }
    // The outermost closed group around it, else itself.
    let rep = n.id;
    for (let p = n.parent; p !== null; p = byId.get(p)?.parent ?? null) {
      if (!state.expanded.has(p)) rep = p;
    }
    return rep;
  };
  for (const n of graph.nodes) {
    const rep = representative(n);
    itemOf.set(n.id, rep);
    const existing = itemById.get(rep);
    if (existing) {
      existing.members.push(n.id);
      if (n.seconds) existing.seconds = (existing.seconds ?? 0) + n.seconds;
      continue;
    }
    const item: Item = rep.startsWith('d') && rep !== n.id
      ? {
          id: rep, kind: 'dispatch', label: `dispatch ${n.dispatch}`, detail: '', members: [n.id], parent: null,
          dialect: '', dispatch: n.dispatch, range: n.range, seconds: n.seconds ?? null,
        }
      : {
          id: n.id,
          kind: n.kind === 'op' && n.children > 0 && !state.expanded.has(n.id) ? 'group' : n.kind,
          label: n.label,
          detail: n.type,
          members: [n.id],
          parent: openParent(n, byId, state),
          dialect: n.dialect,
          dispatch: n.dispatch,
          range: n.range,
          seconds: n.seconds ?? null,
        };
    items.push(item);
    itemById.set(rep, item);
  }
  for (const item of items) {
    if (item.kind === 'dispatch') {
      item.detail = `${item.members.length} op${item.members.length === 1 ? '' : 's'}`;
    } else if (item.kind === 'group') {
      item.detail = `${item.members.length - 1} ops inside · ${item.detail}`;
    }
  }
  const edges: ShownEdge[] = [];
  const seen = new Set<string>();
  for (const e of graph.edges) {
    const source = itemOf.get(e.source);
    const target = itemOf.get(e.target);
    if (!source || !target || source === target) continue;
    const key = `${source}>${target}>${e.value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ id: e.id, source, target, value: e.value });
  }
  return { items, edges, itemOf };
}

function openParent(n: GraphNode, byId: Map<string, GraphNode>, state: ViewState): string | null {
  // Shown only when every group around it is open: its parent is then open too.
  return n.parent !== null && state.expanded.has(n.parent) ? n.parent : null;
}

/** A run of top-level items laid out together, with the proxies of values it reads from elsewhere. */
export interface Section {
  index: number;
  items: Item[];
  proxies: Item[];
  edges: ShownEdge[];
}

/**
 * The shown items cut into sections of at most `limit` nodes (`first` for the first; an open
 * group and its ops stay in one section, however many they are), in program order.
 */
export function sections(shown: Shown, limit = SECTION_NODES, first = limit): Section[] {
  const out: Section[] = [];
  const topOf = new Map<string, string>();
  const byId = new Map(shown.items.map((i) => [i.id, i]));
  const top = (item: Item): string => {
    let t = item;
    while (t.parent !== null && byId.has(t.parent)) t = byId.get(t.parent)!;
    return t.id;
  };
  const runs = new Map<string, Item[]>();
  const order: string[] = [];
  for (const item of shown.items) {
    const t = top(item);
    topOf.set(item.id, t);
    if (!runs.has(t)) {
      runs.set(t, []);
      order.push(t);
    }
    runs.get(t)!.push(item);
  }
  let current: Item[] = [];
  const flush = () => {
    if (current.length) out.push({ index: out.length, items: current, proxies: [], edges: [] });
    current = [];
  };
  for (const t of order) {
    const run = runs.get(t)!;
    if (current.length && current.length + run.length > (out.length ? limit : first)) flush();
    current.push(...run);
  }
  flush();
  const sectionOf = new Map<string, number>();
  for (const s of out) for (const i of s.items) sectionOf.set(i.id, s.index);
  for (const e of shown.edges) {
    const target = sectionOf.get(e.target);
    const source = sectionOf.get(e.source);
    if (target === undefined || source === undefined) continue;
    const section = out[target];
    if (source === target) {
      section.edges.push(e);
      continue;
    }
    // A value from another section: one proxy per (value's item, section).
    const proxyId = `p${target}:${e.source}`;
    if (!section.proxies.some((p) => p.id === proxyId)) {
      const from = byId.get(e.source)!;
      section.proxies.push({
        id: proxyId, kind: 'proxy', label: e.value.startsWith('#') ? from.label : e.value, detail: `from ${from.label}`,
        members: [e.source], parent: null, dialect: from.dialect, dispatch: from.dispatch, range: from.range, seconds: null,
      });
    }
    if (!section.edges.some((x) => x.source === proxyId && x.target === e.target)) {
      section.edges.push({ id: `${e.id}@${target}`, source: proxyId, target: e.target, value: e.value });
    }
  }
  return out;
}

export function itemWidth(item: Item): number {
  const text = Math.max(item.label.length, Math.min(item.detail.length, 28) * 0.85);
  return item.kind === 'proxy' ? Math.max(36, item.label.length * CHAR_WIDTH + 14) : Math.max(64, text * CHAR_WIDTH + 20);
}

export function itemHeight(item: Item): number {
  return item.kind === 'proxy' ? 20 : NODE_HEIGHT;
}

export const ELK_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.layered.spacing.nodeNodeBetweenLayers': '28',
  'elk.spacing.nodeNode': '16',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
  'elk.layered.thoroughness': '2',
  'elk.edgeRouting': 'POLYLINE',
};

export interface ElkNode {
  id: string;
  width?: number;
  height?: number;
  x?: number;
  y?: number;
  children?: ElkNode[];
  edges?: ElkEdge[];
  layoutOptions?: Record<string, string>;
}

export interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  sections?: { startPoint: Point; endPoint: Point; bendPoints?: Point[] }[];
  /** The node ELK placed it in (the innermost holding both ends): its points are relative to it. */
  container?: string;
}

export interface Point {
  x: number;
  y: number;
}

/** ELK's input for a section: open groups as compound nodes, every edge at the top (ELK routes it across). */
export function elkGraph(section: Section): ElkNode {
  const nodes = new Map<string, ElkNode>();
  const root: ElkNode = { id: `s${section.index}`, layoutOptions: ELK_OPTIONS, children: [], edges: [] };
  for (const item of [...section.proxies, ...section.items]) {
    nodes.set(item.id, { id: item.id, width: itemWidth(item), height: itemHeight(item) });
  }
  for (const item of [...section.proxies, ...section.items]) {
    const parent = item.parent !== null ? nodes.get(item.parent) : undefined;
    const node = nodes.get(item.id)!;
    if (parent) {
      parent.children ??= [];
      parent.children.push(node);
      parent.layoutOptions = { 'elk.padding': '[top=30,left=10,bottom=10,right=10]' };
      delete parent.width;
      delete parent.height;
    } else {
      root.children!.push(node);
    }
  }
  root.edges = section.edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] }));
  return root;
}

/** Where each node of a laid-out section is, in the section's coordinates (ELK nests them). */
export interface Placed {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function placements(layout: ElkNode): Map<string, Placed> {
  const out = new Map<string, Placed>();
  const walk = (node: ElkNode, dx: number, dy: number) => {
    for (const c of node.children ?? []) {
      const x = dx + (c.x ?? 0);
      const y = dy + (c.y ?? 0);
      out.set(c.id, { x, y, width: c.width ?? 0, height: c.height ?? 0 });
      walk(c, x, y);
    }
  };
  walk(layout, 0, 0);
  return out;
}

/** ELK_OPTIONS' spacings, and the padding elkGraph gives an open group (ELK's root has 12). */
const BETWEEN_LAYERS = 28;
const BETWEEN_NODES = 16;
const GROUP_PADDING = { top: 30, left: 10, bottom: 10, right: 10 };
const ROOT_PADDING = { top: 12, left: 12, bottom: 12, right: 12 };

/**
 * A draft of a section's layout (`elkGraph`'s input, placed and routed as ELK answers), drawn
 * while ELK's worker is still starting (its 1.6 MB to parse and its first layout take most of a
 * second on a loaded machine) and replaced by ELK's: nodes in layers by the longest path to them,
 * each layer centred, left to right in program order; edges straight from the bottom of their
 * source to the top of their target. Well under a millisecond for a section.
 */
export function draftLayout(graph: ElkNode): ElkNode {
  const parentOf = new Map<string, ElkNode>();
  const copy = (node: ElkNode): ElkNode => {
    const out: ElkNode = { ...node, children: (node.children ?? []).map(copy) };
    for (const c of out.children!) parentOf.set(c.id, out);
    return out;
  };
  const root = copy(graph);
  const edges = graph.edges ?? [];
  placeDraft(root, edges, parentOf, ROOT_PADDING);
  const at = placements(root);
  root.edges = edges.map((e) => {
    const s = at.get(e.sources[0]);
    const t = at.get(e.targets[0]);
    if (!s || !t) return { id: e.id, sources: e.sources, targets: e.targets, sections: [] };
    // (an edge into an open group's op from above it, or the other way: from side to side)
    const down = t.y >= s.y + s.height;
    const startPoint = { x: s.x + s.width / 2, y: down ? s.y + s.height : s.y + s.height / 2 };
    const endPoint = { x: t.x + t.width / 2, y: down ? t.y : t.y + t.height / 2 };
    return { id: e.id, sources: e.sources, targets: e.targets, sections: [{ startPoint, endPoint }] };
  });
  return root;
}

/** Places `node`'s children relative to it (an open group's own first: its size is its content's) and sizes it. */
function placeDraft(node: ElkNode, edges: ElkEdge[], parentOf: Map<string, ElkNode>,
  padding: typeof ROOT_PADDING): void {
  const children = node.children ?? [];
  for (const c of children) if (c.children?.length) placeDraft(c, edges, parentOf, GROUP_PADDING);
  // The child of `node` that holds item `id`: itself, or the open group around it.
  const position = new Map(children.map((c, i) => [c.id, i]));
  const childOf = (id: string): number | undefined => {
    for (let n: string | undefined = id; n !== undefined; n = parentOf.get(n)?.id) {
      if (parentOf.get(n) === node) return position.get(n);
    }
    return undefined;
  };
  // Children come in program order (proxies first), so an edge only raises a later child's layer.
  const links = edges.map((e) => [childOf(e.sources[0]), childOf(e.targets[0])])
    .filter((l): l is [number, number] => l[0] !== undefined && l[1] !== undefined && l[0] < l[1])
    .sort((a, b) => a[1] - b[1]);
  const layer = new Array<number>(children.length).fill(0);
  for (const [s, t] of links) layer[t] = Math.max(layer[t], layer[s] + 1);
  const rows: ElkNode[][] = [];
  children.forEach((c, i) => (rows[layer[i]] ??= []).push(c));
  const full = rows.filter(Boolean);
  const widthOf = (row: ElkNode[]) => row.reduce((w, c) => w + (c.width ?? 0), 0) + BETWEEN_NODES * (row.length - 1);
  const widest = Math.max(0, ...full.map(widthOf));
  let y = padding.top;
  for (const row of full) {
    let x = padding.left + (widest - widthOf(row)) / 2;
    for (const c of row) {
      c.x = x;
      c.y = y;
      x += (c.width ?? 0) + BETWEEN_NODES;
    }
    y += Math.max(...row.map((c) => c.height ?? 0)) + BETWEEN_LAYERS;
  }
  node.width = padding.left + widest + padding.right;
  node.height = (full.length ? y - BETWEEN_LAYERS : y) + padding.bottom;
}

/** A colour for every dispatch: hues spread by the golden angle, so neighbours differ. */
export function dispatchColour(id: number): string {
  return `hsl(${Math.round((id * 137.508) % 360)}, 62%, 52%)`;
}

/** The dialect's colour family, as the pipeline view's (its CSS variables). */
export function dialectFamily(dialect: string): string {
  if (['stablehlo', 'mhlo', 'chlo'].includes(dialect)) return 'hlo';
  if (dialect === 'tosa') return 'tosa';
  if (['linalg', 'tensor', 'bufferization'].includes(dialect)) return 'linalg';
  if (['scf', 'memref', 'affine', 'cf', 'vector'].includes(dialect)) return 'loops';
  if (dialect === 'llvm') return 'llvm';
  if (['arith', 'math', 'index', 'complex'].includes(dialect)) return 'arith';
  if (['func', 'builtin'].includes(dialect)) return 'frame';
  return 'other';
}

/** The fill of an item under an overlay (a CSS colour), or '' for the theme's own. */
export function fill(item: Item, overlay: Overlay, slowest: number): string {
  if (item.kind === 'input' || item.kind === 'output' || item.kind === 'proxy') return '';
  if (overlay === 'dialect') return item.dialect ? `var(--fam-${dialectFamily(item.dialect)})` : '';
  if (overlay === 'dispatch') return item.dispatch === null ? '' : dispatchColour(item.dispatch);
  if (overlay === 'profile') {
    if (!item.seconds || slowest <= 0) return '';
    // From pale to saturated red by share of the slowest op.
    const share = Math.min(1, item.seconds / slowest);
    return `hsl(5, ${Math.round(30 + 60 * share)}%, ${Math.round(75 - 30 * share)}%)`;
  }
  return '';
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function clipText(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(0, Math.max(1, chars - 1)) + '…';
}

export function formatSeconds(s: number): string {
  return s >= 1 ? `${s.toFixed(2)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(2)} ms` : `${(s * 1e6).toFixed(1)} µs`;
}

/** The tooltip of an item: what it is, its type, its dispatch (and kernel), its time. */
export function tooltip(item: Item, dispatches: Map<number, DispatchInfo>, graph: LevelGraph): string {
  const node = graph.nodes.find((n) => n.id === item.members[0]);
  const lines = [item.kind === 'dispatch' ? item.label : item.kind === 'proxy' ? `${item.label} (${item.detail})` : node?.op || item.label];
  if (item.kind !== 'dispatch' && item.kind !== 'proxy' && node?.type) lines.push(node.type);
  if (item.kind === 'group' || item.kind === 'dispatch') lines.push(item.detail);
  if (item.dispatch !== null) {
    const d = dispatches.get(item.dispatch);
    lines.push(`dispatch ${item.dispatch}${node?.fused ? ' (fused into its consumer)' : ''}` +
      (d ? `: kernel ${d.name} (${d.ops.join(', ')})` : ''));
  }
  if (item.seconds) lines.push(`time: ${formatSeconds(item.seconds)}`);
  return lines.join('\n');
}

/** The SVG of a laid-out section (its own coordinates), with the items' data for the script. */
export function sectionSvg(section: Section, layout: ElkNode, overlay: Overlay, slowest: number,
  dispatches: Map<number, DispatchInfo>, graph: LevelGraph): string {
  const at = placements(layout);
  const parts: string[] = [];
  const items = [...section.proxies, ...section.items];
  // Groups first (they are drawn under their ops), then edges, then nodes.
  for (const item of items) {
    const p = at.get(item.id);
    if (!p || !layoutHasChildren(layout, item.id)) continue;
    parts.push(`<g class="open-group" data-id="${escapeXml(item.id)}"><rect x="${p.x}" y="${p.y}" width="${p.width}" height="${p.height}" rx="6"/>` +
      `<text class="group-title" x="${p.x + 8}" y="${p.y + 18}">⊟ ${escapeXml(clipText(item.label, Math.floor(p.width / CHAR_WIDTH) - 3))}</text>` +
      `<title>${escapeXml(tooltip(item, dispatches, graph))}</title></g>`);
  }
  for (const edge of layout.edges ?? []) {
    const origin = (edge.container && at.get(edge.container)) || { x: 0, y: 0 };
    for (const s of edge.sections ?? []) {
      const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint];
      const d = pts.map((q) => `${(q.x + origin.x).toFixed(1)},${(q.y + origin.y).toFixed(1)}`).join('L');
      parts.push(`<path class="edge" data-edge="${escapeXml(edge.id)}" d="M${d}"/>`);
    }
  }
  for (const item of items) {
    const p = at.get(item.id);
    if (!p || layoutHasChildren(layout, item.id)) continue;
    const colour = fill(item, overlay, slowest);
    const style = colour ? ` style="fill:${colour}"` : '';
    const chars = Math.floor((p.width - 12) / CHAR_WIDTH);
    const detail = item.kind === 'proxy' ? '' :
      `<text class="detail" x="${p.x + p.width / 2}" y="${p.y + 29}">${escapeXml(clipText(item.detail, Math.floor(chars * 1.15)))}</text>`;
    const badge = item.kind === 'group' ? `<text class="badge" x="${p.x + 6}" y="${p.y + 13}">⊞</text>` : '';
    parts.push(`<g class="node ${item.kind}" data-id="${escapeXml(item.id)}">` +
      `<rect x="${p.x}" y="${p.y}" width="${p.width}" height="${p.height}" rx="${item.kind === 'op' || item.kind === 'group' || item.kind === 'dispatch' ? 4 : p.height / 2}"${style}/>` +
      `<text class="label" x="${p.x + p.width / 2}" y="${p.y + (item.kind === 'proxy' ? 14 : 15)}">${escapeXml(clipText(item.label, chars))}</text>` +
      detail + badge + `<title>${escapeXml(tooltip(item, dispatches, graph))}</title></g>`);
  }
  return parts.join('');
}

function layoutHasChildren(layout: ElkNode, id: string): boolean {
  const find = (node: ElkNode): ElkNode | undefined => {
    for (const c of node.children ?? []) {
      if (c.id === id) return c;
      const hit = find(c);
      if (hit) return hit;
    }
    return undefined;
  };
  return (find(layout)?.children?.length ?? 0) > 0;
}

/**
 * The node at a document position: the innermost whose range holds it (the op at the cursor;
 * at a lowered level, every op made from the source op there: the first of them is returned
 * with the others in `all`).
 */
export function nodesAt(graph: LevelGraph, line: number, character: number): GraphNode[] {
  const holds = (r: number[]) =>
    (line > r[0] || (line === r[0] && character >= r[1])) && (line < r[2] || (line === r[2] && character <= r[3]));
  const size = (r: number[]) => (r[2] - r[0]) * 1e6 + (r[3] - r[1]);
  const hits = graph.nodes.filter((n) => n.kind === 'op' && n.range && holds(n.range));
  if (!hits.length) return [];
  const smallest = Math.min(...hits.map((n) => size(n.range!)));
  return hits.filter((n) => size(n.range!) === smallest);
}

/** The nodes of `other` made from the same source op as `node` (the origin links between two levels). */
export function originMatches(node: GraphNode, other: LevelGraph): GraphNode[] {
  if (!node.range) return [];
  const [l, c] = node.range;
  return other.nodes.filter((n) => n.kind === 'op' && n.range && n.range[0] === l && n.range[1] === c);
}

/** The slowest item's time, the profile overlay's full colour. */
export function slowestTime(graph: LevelGraph): number {
  return Math.max(0, ...graph.nodes.map((n) => n.seconds ?? 0));
}

/**
 * The server's second answer (with the dispatches formed) folded into the graph shown, and
 * into the items drawn for it (`items`: the sections' items and proxies; laid out already).
 */
export function mergeDispatches(graph: LevelGraph, withDispatches: LevelGraph, items: Item[] = []): void {
  const by = new Map(withDispatches.nodes.map((n) => [n.id, n]));
  for (const n of graph.nodes) {
    const d = by.get(n.id);
    if (d && d.op === n.op) {
      n.dispatch = d.dispatch;
      n.fused = d.fused;
    }
  }
  for (const item of items) {
    const n = by.get(item.members[0]);
    if (item.kind !== 'dispatch' && n) item.dispatch = n.dispatch;
  }
}
