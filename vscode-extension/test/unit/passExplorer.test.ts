import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PassStep, ProfileResult } from '../../src/pipeline/model';
import { changeCounts, firstStep, listedSteps, renderDiffLine, renderPassExplorer } from '../../src/pipeline/passes';
import { formatShare, renderProfile, shareLabel } from '../../src/pipeline/profile';
import { renderPipeline } from '../../src/pipeline/render';

// Trimmed from a real `mlirtext.pipeline` answer's `steps` for @mlp (examples/mlp_stablehlo.mlir).
const STEPS: PassStep[] = [
  {
    index: 0, pass: null, level: 'hlo', seconds: 0, ops_before: 4, ops_after: 4, changed: false,
    lines: [
      { kind: '', text: 'func.func @mlp(%x: tensor<4xf32>) -> tensor<4xf32> {', origin: 1 },
      { kind: '', text: '  %h = stablehlo.maximum %x, %x : tensor<4xf32>', origin: 2 },
      { kind: '', text: '  return %h : tensor<4xf32>', origin: 3 },
      { kind: '', text: '}', origin: null },
    ],
    counts: {}, summary: '',
  },
  {
    index: 1, pass: 'convert-hlo-to-tosa', level: 'tosa', seconds: 0.098, ops_before: 4, ops_after: 4, changed: true,
    lines: [
      { kind: '', text: 'func.func @mlp(%x: tensor<4xf32>) -> tensor<4xf32> {', origin: 1 },
      { kind: 'removed', text: '  %h = stablehlo.maximum %x, %x : tensor<4xf32>', origin: 2 },
      { kind: 'added', text: '  %h = tosa.maximum %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>', origin: 2 },
      { kind: '', text: '  return %h : tensor<4xf32>', origin: 3 },
      { kind: '', text: '}', origin: null },
    ],
    counts: { added: 1, removed: 1, changed: 0, moved: 0 }, summary: 'stablehlo.maximum -> tosa.maximum',
  },
  {
    index: 2, pass: 'canonicalize', level: 'tosa', seconds: 0.002, ops_before: 4, ops_after: 4, changed: false,
    lines: [], counts: {}, summary: '',
  },
  {
    index: 3, pass: 'cse', level: 'tosa', seconds: 0.0002, ops_before: 4, ops_after: 3, changed: true,
    lines: [{ kind: 'moved', text: '  %c = "x.y"() : () -> i1 <&>', origin: null }],
    counts: { added: 0, removed: 1, changed: 2, moved: 1 }, summary: 'tosa.const -> nothing; 2 changed; 1 moved',
  },
];

test('the first step shown is the first pass that changed the IR; unchanged ones can be left out', () => {
  assert.equal(firstStep(STEPS), 1);
  assert.equal(firstStep([STEPS[0], STEPS[2]]), 0);
  assert.deepEqual(listedSteps(STEPS, true).map((s) => s.index), [0, 1, 3]);
  assert.deepEqual(listedSteps(STEPS, false).map((s) => s.index), [0, 1, 2, 3]);
  assert.equal(changeCounts(STEPS[3]), '−1 ~2 ↕1');
  assert.equal(changeCounts(STEPS[0]), '');
});

test('the explorer lists every pass, unchanged ones hidden, and shows one step: its diff marked', () => {
  const html = renderPassExplorer(STEPS);
  assert.match(html, /<section class="pass-explorer" id="pass-explorer" data-current="1">/);
  assert.match(html, /id="px-prev"/);
  assert.match(html, /id="px-next"/);
  assert.match(html, /<input type="checkbox" id="px-hide-unchanged" checked> hide the 1 passes that changed nothing/);
  assert.match(html, /<input type="search" id="px-search"/);
  // the list: one item per step, the unchanged pass hidden, the first changed one picked
  const items = [...html.matchAll(/<li class="px-item ([^"]*)" data-step="(\d)" data-changed="(\d)"( hidden)?>/g)];
  assert.deepEqual(items.map((m) => [m[1], m[2], Boolean(m[4])]), [
    ['input', '0', false],
    ['changed on', '1', false],
    ['unchanged', '2', true],
    ['changed', '3', false],
  ]);
  assert.match(html, /<span class="px-pass">convert-hlo-to-tosa<\/span><span class="px-lvl fam-text-tosa">tosa<\/span><span class="num">98\.0 ms<\/span><span class="num px-ops">4 → 4<\/span>/);
  // the panes: only the current one shown
  const panes = [...html.matchAll(/<article class="px-step" data-step="(\d)"( hidden)?>/g)];
  assert.deepEqual(panes.map((m) => [m[1], Boolean(m[2])]), [['0', true], ['1', false], ['2', true], ['3', true]]);
  // the diff: the removed op right before the op that replaced it, both with the source line as origin
  const pane = html.slice(html.indexOf('data-step="1">'), html.indexOf('data-step="2">'));
  assert.match(pane, /<span class="px-counts">\+1 −1<\/span> stablehlo\.maximum -&gt; tosa\.maximum/);
  const removed = pane.indexOf('class="ln d-removed op" data-line="1" data-defs="%h" data-origin="2" data-op="stablehlo.maximum"');
  const added = pane.indexOf('class="ln d-added op" data-line="2" data-defs="%h" data-origin="2" data-op="tosa.maximum"');
  assert.ok(removed > 0 && added > removed, pane);
  assert.match(pane, /<span class="mark">−<\/span>/);
  assert.match(pane, /<span class="mark">\+<\/span>/);
  assert.match(pane, /class="ln d-same op" data-line="3" data-origin="3" data-op="func.return"|class="ln d-same" data-line="3" data-origin="3"/);
  // an unchanged pass says which step's IR it shows
  assert.match(html, /canonicalize changed nothing: the IR is as after step 1 \(convert-hlo-to-tosa\)\./);
  // text is escaped
  assert.match(html, /<span class="mark">↕<\/span>.*&lt;&amp;&gt;/);
  assert.equal(renderPassExplorer([]), '');
  assert.equal(renderPassExplorer(undefined), '');
});

test('a diff line without an op is not clickable, one with an op carries what the click follows', () => {
  assert.equal(renderDiffLine({ kind: 'skip', text: '12 unchanged lines', origin: null }, 3),
    '<div class="ln d-skip" data-line="3"><span class="mark">⋯</span>12 unchanged lines</div>');
  assert.equal(renderDiffLine({ kind: '', text: '}', origin: null }, 7), '<div class="ln d-same" data-line="7"><span class="mark"> </span>}</div>');
  assert.match(renderDiffLine({ kind: 'changed', text: '  %0 = arith.addf %a, %b : f32', origin: 12 }, 0),
    /^<div class="ln d-changed op" data-line="0" data-origin="12" data-op="arith.addf"><span class="mark">~<\/span>/);
});

const PROFILE: ProfileResult = {
  function: 'mlp', device: 'local-task', calls: 5, seconds: 0.00008,
  rows: [
    { name: 'mlp#0', kernel: 'mlp_dispatch_0', calls: 5, total: 0.00004, median: 0.000007, share: 0.5, lines: [4, 5], ops: ['stablehlo.dot_general', 'stablehlo.add'] },
    { name: 'mlp#1', kernel: 'mlp_dispatch_2', calls: 5, total: 0.00002, median: 0.000004, share: 0.25, lines: [], ops: [] },
  ],
  host_share: 0.25,
  ops: [{ line: 4, share: 0.5, seconds: 0.000008, dispatches: ['mlp#0'] }, { line: 9, share: 0.75, seconds: 1e-5, dispatches: ['mlp#0', 'mlp#1'] }],
};

test('the profile table: each dispatch with its share, clickable to its source op; then the host', () => {
  const html = renderProfile(PROFILE);
  assert.match(html, /<tr class="dispatch" data-dispatch="mlp#0" data-origin="4" title="@mlp_dispatch_0: stablehlo\.dot_general, stablehlo\.add">/);
  assert.match(html, /<tr class="dispatch" data-dispatch="mlp#1" title="@mlp_dispatch_2: ">/);
  assert.match(html, /<td class="pass">mlp#0<\/td><td class="num">5<\/td><td class="num">40 µs<\/td><td class="num">7 µs<\/td><td class="num">50\.0%<\/td>/);
  assert.match(html, /<tr class="host muted"><td>host<\/td><td><\/td><td><\/td><td><\/td><td class="num">25\.0%<\/td>/);
  assert.match(html, /5 calls on local-task/);
  assert.match(renderProfile(undefined), /pending/);
  assert.equal(renderProfile({ error: 'a profile is of <native> code' }), '<p class="error">a profile is of &lt;native&gt; code</p>');
  assert.equal(shareLabel(PROFILE.ops![1]), '⏱ 75.0% of run time · mlp#0, mlp#1');
  assert.equal(formatShare(0.0004), '0.0%');
});

test('the pipeline page holds the pass explorer and the profile panel', () => {
  const ctx = { fn: 'mlp', file: 'mlp.mlir', cspSource: 'vscode-resource:', nonce: 'N0nce', styleUri: 's.css', scriptUri: 'p.js' };
  const result = { function: 'mlp', levels: [{ level: 'hlo', text: 'x\n', op_counts: {}, passes: [] }], steps: STEPS };
  const page = renderPipeline(result, ctx);
  assert.match(page, /<div class="panel" id="profile"><h2>Profile<\/h2><div class="body"><p class="muted pending">/);
  assert.ok(page.indexOf('id="pass-explorer"') > page.indexOf('id="profile"'));
  assert.ok(page.indexOf('id="pass-explorer"') < page.indexOf('id="levels"'));
  assert.match(renderPipeline(result, { ...ctx, profile: PROFILE }), /data-dispatch="mlp#0"/);
  assert.doesNotMatch(renderPipeline({ ...result, steps: [] }, ctx), /pass-explorer/);
});
