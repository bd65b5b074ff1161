import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ElkNode,
  LevelGraph,
  dispatchColour,
  draftLayout,
  elkGraph,
  fill,
  initialState,
  mergeDispatches,
  nodesAt,
  originMatches,
  placements,
  sectionSvg,
  sections,
  shownGraph,
  tooltip,
} from '../../src/graph/model';
import { graphCommandArguments, renderGraphPage } from '../../src/graph/page';
import { divergentNodes, graphDivergenceOf, originLinePath } from '../../src/graph/marks';
import { BisectResult } from '../../src/debugging/results';

// A real `mlirtext.graph` answer for @dense (examples/dense_linalg.mlir), with its dispatches formed.
const DENSE: LevelGraph = {
  function: 'dense', level: 'linalg', source: true, ops: 12,
  nodes: [
    { id: "in0", kind: "input", op: "", dialect: "", label: "%x", parent: null, children: 0, range: [3, 17, 3, 19], dispatch: null, type: "tensor<4x8xf32>" },
    { id: "in1", kind: "input", op: "", dialect: "", label: "%w", parent: null, children: 0, range: [3, 38, 3, 40], dispatch: null, type: "tensor<8x16xf32>" },
    { id: "in2", kind: "input", op: "", dialect: "", label: "%b", parent: null, children: 0, range: [3, 60, 3, 62], dispatch: null, type: "tensor<16xf32>" },
    { id: "n0", kind: "op", op: "arith.constant", dialect: "arith", label: "constant", parent: null, children: 0, range: [4, 2, 4, 34], dispatch: null, type: "f32" },
    { id: "n1", kind: "op", op: "tensor.empty", dialect: "tensor", label: "empty", parent: null, children: 0, range: [5, 2, 5, 44], dispatch: null, type: "tensor<4x16xf32>" },
    { id: "n2", kind: "op", op: "linalg.fill", dialect: "linalg", label: "fill", parent: null, children: 1, range: [6, 2, 6, 89], dispatch: 0, type: "tensor<4x16xf32>" },
    { id: "n3", kind: "op", op: "linalg.yield", dialect: "linalg", label: "yield", parent: "n2", children: 0, range: [6, 2, 6, 89], dispatch: 0, type: "" },
    { id: "n4", kind: "op", op: "linalg.matmul", dialect: "linalg", label: "matmul", parent: null, children: 3, range: [7, 2, 7, 119], dispatch: 0, type: "tensor<4x16xf32>" },
    { id: "n5", kind: "op", op: "arith.mulf", dialect: "arith", label: "mulf", parent: "n4", children: 0, range: [7, 2, 7, 119], dispatch: 0, type: "f32" },
    { id: "n6", kind: "op", op: "arith.addf", dialect: "arith", label: "addf", parent: "n4", children: 0, range: [7, 2, 7, 119], dispatch: 0, type: "f32" },
    { id: "n7", kind: "op", op: "linalg.yield", dialect: "linalg", label: "yield", parent: "n4", children: 0, range: [7, 2, 7, 119], dispatch: 0, type: "" },
    { id: "n8", kind: "op", op: "linalg.generic", dialect: "linalg", label: "generic", parent: null, children: 3, range: [8, 2, 14, 23], dispatch: 1, type: "tensor<4x16xf32>" },
    { id: "n9", kind: "op", op: "arith.addf", dialect: "arith", label: "addf", parent: "n8", children: 0, range: [11, 4, 11, 35], dispatch: 1, type: "f32" },
    { id: "n10", kind: "op", op: "arith.maximumf", dialect: "arith", label: "maximumf", parent: "n8", children: 0, range: [12, 4, 12, 39], dispatch: 1, type: "f32" },
    { id: "n11", kind: "op", op: "linalg.yield", dialect: "linalg", label: "yield", parent: "n8", children: 0, range: [13, 4, 13, 25], dispatch: 1, type: "" },
    { id: "out0", kind: "output", op: "", dialect: "", label: "result 0", parent: null, children: 0, range: [15, 2, 15, 30], dispatch: null, type: "tensor<4x16xf32>" },
  ],
  edges: [
    { id: "e0", source: "n0", target: "n2", value: "%zero", type: "f32" },
    { id: "e1", source: "n1", target: "n2", value: "%empty", type: "tensor<4x16xf32>" },
    { id: "e2", source: "in0", target: "n4", value: "%x", type: "tensor<4x8xf32>" },
    { id: "e3", source: "in1", target: "n4", value: "%w", type: "tensor<8x16xf32>" },
    { id: "e4", source: "n2", target: "n4", value: "%acc", type: "tensor<4x16xf32>" },
    { id: "e5", source: "n5", target: "n6", value: "%v", type: "f32" },
    { id: "e6", source: "n6", target: "n7", value: "%v", type: "f32" },
    { id: "e7", source: "n4", target: "n8", value: "%xw", type: "tensor<4x16xf32>" },
    { id: "e8", source: "in2", target: "n8", value: "%b", type: "tensor<16xf32>" },
    { id: "e9", source: "n1", target: "n8", value: "%empty", type: "tensor<4x16xf32>" },
    { id: "e10", source: "n9", target: "n10", value: "%s", type: "f32" },
    { id: "e11", source: "n0", target: "n10", value: "%zero", type: "f32" },
    { id: "e12", source: "n10", target: "n11", value: "%r", type: "f32" },
    { id: "e13", source: "n8", target: "out0", value: "%y", type: "tensor<4x16xf32>" },
  ],
};

const clone = (g: LevelGraph): LevelGraph => JSON.parse(JSON.stringify(g));
const DISPATCHES = new Map([
  [0, { id: 0, name: 'dense_dispatch_0', ops: ['linalg.fill', 'linalg.matmul'], lines: [6, 7] }],
  [1, { id: 1, name: 'dense_dispatch_1', ops: ['linalg.generic'], lines: [8, 11, 12, 13] }],
]);

test('a small function opens with its regions open: every op is an item, in its group', () => {
  const shown = shownGraph(DENSE, initialState(DENSE));
  assert.equal(shown.items.length, DENSE.nodes.length);
  const generic = shown.items.find((i) => i.id === 'n8')!;
  assert.equal(generic.kind, 'op');
  assert.deepEqual(shown.items.filter((i) => i.parent === 'n8').map((i) => i.label), ['addf', 'maximumf', 'yield']);
  // %zero crosses into the generic's region: an edge to the maximumf inside it.
  assert.ok(shown.edges.some((e) => e.source === 'n0' && e.target === 'n10' && e.value === '%zero'));
});

test('a closed region is one node: the edges into its ops come to it, and the ones inside are gone', () => {
  const state = initialState(DENSE);
  state.expanded.delete('n8');
  const shown = shownGraph(DENSE, state);
  const generic = shown.items.find((i) => i.id === 'n8')!;
  assert.equal(generic.kind, 'group');
  assert.deepEqual(generic.members, ['n8', 'n9', 'n10', 'n11']);
  assert.match(generic.detail, /^3 ops inside/);
  assert.equal(shown.itemOf.get('n10'), 'n8');
  assert.deepEqual(shown.edges.filter((e) => e.target === 'n8').map((e) => e.value), ['%xw', '%b', '%empty', '%zero']);
  assert.ok(!shown.edges.some((e) => e.value === '%s'));
});

test('grouped by dispatch, each dispatch is one node with its ops', () => {
  const shown = shownGraph(DENSE, { expanded: new Set(), byDispatch: true });
  const dispatches = shown.items.filter((i) => i.kind === 'dispatch');
  assert.deepEqual(dispatches.map((d) => [d.id, d.members.length, d.detail]), [['d0', 6, '6 ops'], ['d1', 4, '4 ops']]);
  assert.deepEqual(shown.edges.filter((e) => e.source === 'd0').map((e) => [e.target, e.value]), [['d1', '%xw']]);
  assert.ok(shown.items.some((i) => i.id === 'n0') && shown.items.some((i) => i.id === 'out0'));
});

test('sections hold at most the limit, keep a group whole, and bring values from before through proxies', () => {
  const shown = shownGraph(DENSE, initialState(DENSE));
  const cut = sections(shown, 6);
  assert.equal(cut.length, 3);
  assert.deepEqual(cut.map((s) => s.items.length), [5, 6, 5]);
  // The generic and its three ops are in one section.
  const withGeneric = cut.find((s) => s.items.some((i) => i.id === 'n8'))!;
  assert.deepEqual(withGeneric.items.filter((i) => i.parent === 'n8').length, 3);
  // %xw (the matmul) comes into the generic's section as one proxy named after it.
  const proxy = withGeneric.proxies.find((p) => p.members[0] === 'n4');
  assert.ok(proxy && proxy.label === '%xw' && proxy.kind === 'proxy');
  assert.ok(withGeneric.edges.some((e) => e.source === proxy!.id && e.target === 'n8'));
  // %zero, read by the fill and inside the generic, comes in once, to the maximumf.
  assert.deepEqual(withGeneric.edges.filter((e) => e.value === '%zero').map((e) => e.target), ['n10']);
  assert.deepEqual(withGeneric.proxies.map((p) => p.label).sort(), ['%b', '%empty', '%xw', '%zero']);
  // The first section may be smaller (the view waits for it): 3 here, then runs of up to 6.
  assert.deepEqual(sections(shown, 6, 3).map((s) => s.items.length), [3, 4, 4, 5]);
  // Every edge lands in exactly one section (as itself or through a proxy).
  assert.equal(cut.reduce((a, s) => a + s.edges.length, 0), shown.edges.length);
});

test('ELK lays a section out: nodes nested in their open group, edges routed, drawn as SVG', async () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const ELK = require('elkjs/lib/elk.bundled.js');
  const [section] = sections(shownGraph(DENSE, initialState(DENSE)), 100);
  const input = elkGraph(section);
  const generic = input.children!.find((c) => c.id === 'n8')!;
  assert.deepEqual(generic.children!.map((c) => c.id), ['n9', 'n10', 'n11']);
  const layout: ElkNode = await new ELK().layout(input);
  const at = placements(layout);
  const outer = at.get('n8')!;
  const inner = at.get('n10')!;
  assert.ok(inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width + 0.01);
  // Data flows down: the argument above the matmul, the matmul above the generic, the result below.
  assert.ok(at.get('in0')!.y < at.get('n4')!.y && at.get('n4')!.y < outer.y && outer.y < at.get('out0')!.y);
  const svg = sectionSvg(section, layout, 'dispatch', 0, DISPATCHES, DENSE);
  assert.equal((svg.match(/<g class="node /g) ?? []).length, DENSE.nodes.length - 3);  // open groups drawn as frames
  assert.equal((svg.match(/class="open-group"/g) ?? []).length, 3);
  assert.equal((svg.match(/class="edge"/g) ?? []).length, section.edges.length);
  assert.ok(svg.includes(`style="fill:${dispatchColour(1)}"`));
  // An edge inside the generic (%s: addf -> maximumf) is drawn inside it: ELK gives its points
  // relative to the generic, the SVG in the section's coordinates.
  const s = section.edges.find((e) => e.value === '%s')!;
  const [x, y] = /data-edge="[^"]*" d="M([\d.]+),([\d.]+)/.exec(svg.slice(svg.indexOf(`data-edge="${s.id}"`) - 40))!.slice(1).map(Number);
  assert.ok(x >= outer.x && x <= outer.x + outer.width && y >= outer.y && y <= outer.y + outer.height, `${x},${y}`);
  assert.ok(svg.includes('dispatch 1: kernel dense_dispatch_1 (linalg.generic)'));
});

test('the draft layout, drawn while ELK starts: layers down the data flow, groups around their ops, nothing overlapping', () => {
  for (const cut of [sections(shownGraph(DENSE, initialState(DENSE)), 100), sections(shownGraph(DENSE, initialState(DENSE)), 6)]) {
    for (const section of cut) {
      const input = elkGraph(section);
      const layout = draftLayout(input);
      const at = placements(layout);
      const items = [...section.proxies, ...section.items];
      assert.equal(at.size, items.length);
      // The input is left as it was (ELK lays it out again).
      assert.equal(input.children![0].x, undefined);
      for (const e of section.edges) {
        const [s, t] = [at.get(e.source)!, at.get(e.target)!];
        const nested = (outer: string, inner: string) => items.find((i) => i.id === inner)?.parent === outer;
        if (!nested(e.source, e.target) && !nested(e.target, e.source)) assert.ok(s.y + s.height <= t.y, `${e.source} above ${e.target}`);
      }
      for (const item of items) {
        const p = at.get(item.id)!;
        assert.ok(p.width > 0 && p.height > 0 && p.x >= 0 && p.y >= 0);
        if (item.parent !== null && at.has(item.parent)) {
          const g = at.get(item.parent)!;
          assert.ok(p.x >= g.x && p.y >= g.y + 20 && p.x + p.width <= g.x + g.width && p.y + p.height <= g.y + g.height, item.id);
        }
        // Siblings do not overlap.
        for (const other of items) {
          if (other === item || other.parent !== item.parent) continue;
          const q = at.get(other.id)!;
          assert.ok(p.x + p.width <= q.x || q.x + q.width <= p.x || p.y + p.height <= q.y || q.y + q.height <= p.y, `${item.id} ${other.id}`);
        }
      }
      assert.ok(layout.width! >= Math.max(...[...at.values()].map((p) => p.x + p.width)));
      assert.ok(layout.height! >= Math.max(...[...at.values()].map((p) => p.y + p.height)));
      // Drawn as ELK's layout is: every node and every edge, from its source to its target.
      const svg = sectionSvg(section, layout, 'dialect', 0, DISPATCHES, DENSE);
      assert.equal((svg.match(/class="edge"/g) ?? []).length, section.edges.length);
      for (const e of section.edges) {
        const [x0, y0] = /d="M([\d.]+),([\d.]+)/.exec(svg.slice(svg.indexOf(`data-edge="${e.id}"`)))!.slice(1).map(Number);
        const s = at.get(e.source)!;
        assert.ok(Math.abs(x0 - (s.x + s.width / 2)) < 0.1 && y0 >= s.y && y0 <= s.y + s.height, `${e.id}: ${x0},${y0}`);
      }
    }
  }
});

test('overlays colour by dialect family, dispatch or time, and leave the ends alone', () => {
  const shown = shownGraph(DENSE, initialState(DENSE));
  const item = (id: string) => shown.items.find((i) => i.id === id)!;
  assert.equal(fill(item('n4'), 'dialect', 0), 'var(--fam-linalg)');
  assert.equal(fill(item('n9'), 'dialect', 0), 'var(--fam-arith)');
  assert.equal(fill(item('n4'), 'dispatch', 0), dispatchColour(0));
  assert.equal(fill(item('n0'), 'dispatch', 0), '');
  assert.equal(fill(item('in0'), 'dialect', 0), '');
  assert.notEqual(dispatchColour(0), dispatchColour(1));
  const timed = { ...item('n4'), seconds: 0.002 };
  assert.equal(fill(timed, 'profile', 0.002), 'hsl(5, 90%, 45%)');
  assert.equal(fill(item('n4'), 'profile', 0.002), '');
  assert.match(tooltip(timed, DISPATCHES, DENSE), /linalg\.matmul\ntensor<4x16xf32>\ndispatch 0: kernel dense_dispatch_0 \(linalg\.fill, linalg\.matmul\)\ntime: 2\.00 ms/);
});

test('the cursor finds the innermost op there; a lowered level links by origin', () => {
  // Line 12 (0-based 11) is `%s = arith.addf` inside the generic: the addf, not the generic.
  assert.deepEqual(nodesAt(DENSE, 11, 10).map((n) => n.id), ['n9']);
  assert.deepEqual(nodesAt(DENSE, 9, 6).map((n) => n.id), ['n8']);
  assert.deepEqual(nodesAt(DENSE, 0, 0), []);
  const lowered = clone(DENSE);
  lowered.level = 'loops';
  lowered.nodes = lowered.nodes.map((n, i) => ({ ...n, id: `m${i}` }));
  assert.deepEqual(originMatches(DENSE.nodes.find((n) => n.id === 'n4')!, lowered).map((n) => n.op),
    ['linalg.matmul', 'arith.mulf', 'arith.addf', 'linalg.yield']);
});

test('the second answer folds the dispatches into the graph shown and the items drawn', () => {
  const first = clone(DENSE);
  first.nodes.forEach((n) => (n.dispatch = null));
  const drawn = shownGraph(first, initialState(first)).items;
  mergeDispatches(first, DENSE, drawn);
  assert.deepEqual(first.nodes.map((n) => n.dispatch), DENSE.nodes.map((n) => n.dispatch));
  assert.deepEqual(drawn.map((i) => i.dispatch), DENSE.nodes.map((n) => n.dispatch));
});

test('the page holds the model, ELK\'s API and the script under its nonce, and its style, and allows a blob worker', () => {
  const assets = {
    style: '.node rect { stroke: red; }', model: 'exports.sections = 1;', marks: 'exports.originLinePath = 2;',
    elkApi: 'var ELK = 3; // "</script><!-- not the end"', script: 'const a = "</SCRIPT>";',
  };
  const html = renderGraphPage({
    fn: 'dense', file: 'dense_linalg.mlir', cspSource: 'vscode-resource:', nonce: 'N0NCE', assets,
    elkWorkerUri: 'elk-worker.min.js', elkBundledUri: 'elk.bundled.js',
  });
  assert.ok(html.includes("script-src 'nonce-N0NCE'; worker-src blob:"));
  // Nothing for the page to load before it shows (a webview shows a page once all its files are loaded).
  assert.ok(!/<script[^>]* src=|<link /.test(html));
  assert.ok(html.includes('<style>.node rect { stroke: red; }</style>'));
  const scripts = [...html.matchAll(/<script nonce="N0NCE">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  assert.deepEqual(scripts.slice(-4), ['exports.sections = 1;', 'exports.originLinePath = 2;',
    'var ELK = 3; // "<\\/script><\\!-- not the end"', 'const a = "<\\/SCRIPT>";']);
  // (the escaped script means what the file did)
  assert.equal(new Function(`${scripts.at(-1)} return a;`)(), '</SCRIPT>');
  // Every script is under the nonce.
  assert.equal((html.match(/<script/g) ?? []).length, (html.match(/<script nonce="N0NCE"/g) ?? []).length);
  // The whole of ELK (1.6 MB) is not parsed before the page takes the server's answer: only a
  // view whose worker does not start loads it.
  assert.ok(!html.includes('elk.bundled.js"></script>'));
  // The bisect's line and the origin lines' overlay are in the page.
  assert.ok(html.includes('<div id="divergence" class="divergence" hidden></div>'));
  assert.ok(html.includes('<svg id="origin-lines" class="origin-lines"'));
  assert.ok(html.includes('"elkWorker":"elk-worker.min.js","elkBundled":"elk.bundled.js"'));
  assert.deepEqual(graphCommandArguments('file:///a.mlir', 'f', ['source'], null, false), ['file:///a.mlir', 'f', ['source'], null, false]);
});

// As `mlirtext.bisect` answers for @dense with its relu (the maximumf, line 13) nudged by a pass.
const FOUND: BisectResult = {
  function: 'dense', kind: 'diverged', pass: 'canonicalize{max-num-rewrites=-1}', position: 5, total: 13, level: 'linalg',
  difference: { max_abs: 0.011295318603515625, max_rel: 0.000606, max_ulp: 94832 },
  markers: [{ start: [12, 4], end: [12, 39], op: 'arith.maximumf', message: 'pass 5 of 13 ...' }],
};

test('a bisect marks the ops it blames, at the level written and at a lowered one, and names the pass', () => {
  const marks = graphDivergenceOf(FOUND)!;
  assert.equal(marks.summary, "✗ pass 5 of 13, 'canonicalize{max-num-rewrites=-1}' (step to linalg), diverged · max |Δ| 0.0113 · 94832 ulp");
  assert.deepEqual(divergentNodes(DENSE, marks), ['n10']);
  // Lowered, every op made from the maximumf (its range is the maximumf's), nothing else.
  const lowered = clone(DENSE);
  lowered.level = 'loops';
  lowered.nodes.push({ ...DENSE.nodes[13], id: 'm1', op: 'arith.cmpf', label: 'cmpf' }, { ...DENSE.nodes[13], id: 'm2', op: 'arith.select', label: 'select' });
  assert.deepEqual(divergentNodes(lowered, marks), ['n10', 'm1', 'm2']);
  // Nothing to blame, or a failed bisect: no marks.
  assert.equal(graphDivergenceOf({ function: 'dense', kind: null, markers: [] }), undefined);
  assert.equal(graphDivergenceOf({ error: 'cancelled' }), undefined);
});

test('a bisect across devices marks the ops of the dispatch the device gets wrong', () => {
  // As the server's bisect across devices answers (its `dispatch`, whose source ops are among the markers).
  const generic = { start: [8, 2] as [number, number], end: [14, 23] as [number, number], op: 'linalg.generic', message: 'differs' };
  const answer = {
    function: 'dense', kind: null, markers: [generic],
    dispatch: { device: 'local-task', index: 1, total: 2, name: 'dense#1', kernel: 'dense_dispatch_1', summary: '',
      difference: { max_abs: 0.5, max_rel: 0.1, max_ulp: 4194304 }, ops: [{ op: 'linalg.generic', line: 8 }], markers: [generic] },
  };
  const marks = graphDivergenceOf(answer)!;
  assert.equal(marks.summary, '✗ dispatch 1 (dense_dispatch_1) on local-task differs · max |Δ| 0.5 · 4194304 ulp');
  assert.deepEqual(marks.dispatch, { device: 'local-task', index: 1, kernel: 'dense_dispatch_1' });
  // By its source ops (the markers), not by its kernel's name: the graph's dense_dispatch_1 is not
  // the compiled module's kernel of that name (fused further), so its other ops stay unmarked.
  assert.deepEqual(divergentNodes(DENSE, marks), ['n8']);
  const lowered = clone(DENSE);
  lowered.nodes.push({ ...DENSE.nodes[11], id: 'm1', op: 'scf.for', label: 'for' });
  assert.deepEqual(divergentNodes(lowered, marks), ['n8', 'm1']);
  // A pass to blame as well: both named.
  assert.match(graphDivergenceOf({ ...FOUND, dispatch: answer.dispatch })!.summary,
    /^✗ pass 5 of 13, 'canonicalize\{max-num-rewrites=-1\}' \(step to linalg\), diverged · max \|Δ\| 0\.0113 · 94832 ulp; dispatch 1 \(dense_dispatch_1\) on local-task differs/);
});

test('an origin line goes from the side facing the other pane to the facing side of the op it became', () => {
  const left = { x: 10, y: 20, width: 100, height: 36 };
  const right = { x: 400, y: 200, width: 80, height: 36 };
  assert.equal(originLinePath(left, right), 'M110.0,38.0 C255.0,38.0 255.0,218.0 400.0,218.0');
  assert.equal(originLinePath(right, left), 'M400.0,218.0 C255.0,218.0 255.0,38.0 110.0,38.0');
});
