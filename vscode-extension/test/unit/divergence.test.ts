import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BisectResult } from '../../src/debugging/results';
import { dispatchDivergenceOf, divergenceOf, isGuilty, renderDispatchDivergence, renderDivergence } from '../../src/pipeline/divergence';
import { renderProfile } from '../../src/pipeline/profile';
import { PassStep, PipelineResult } from '../../src/pipeline/model';
import { renderPassExplorer } from '../../src/pipeline/passes';
import { renderChart, renderPassTimes, renderPipeline } from '../../src/pipeline/render';

// As `mlirtext.bisect` answers for examples/mlp_stablehlo.mlir with the relu nudged in the first
// canonicalize after the linalg step (README, "Finding what broke").
const FOUND: BisectResult = {
  function: 'mlp',
  kind: 'diverged',
  pass: 'canonicalize{max-num-rewrites=-1}',
  position: 5,
  total: 13,
  level: 'linalg',
  message: "@mlp's results changed: max |diff| 0.0113, max rel 0.000606, 94832 ulp (the tolerance is 8 ulp or 1e-06 relative)",
  difference: { max_abs: 0.011295318603515625, max_rel: 0.000606, max_ulp: 94832 },
  summary: "pass 5 of 13 of the lowering to llvm (step to linalg), 'canonicalize{max-num-rewrites=-1}', diverged",
};

const LEVELS: PipelineResult['levels'] & object = [
  { level: 'hlo', text: 'x\n', op_counts: { stablehlo: { 'stablehlo.add': 1 } }, passes: [] },
  {
    level: 'tosa', text: 'x\n', op_counts: { tosa: { 'tosa.add': 1 } },
    passes: [{ pass: 'convert-hlo-to-tosa', seconds: 0.1 }, { pass: 'canonicalize', seconds: 0.01 }],
  },
  {
    level: 'linalg', text: 'x\n', op_counts: { linalg: { 'linalg.generic': 1 } },
    passes: [{ pass: 'convert-tosa-to-linalg', seconds: 0.1 }, { pass: 'canonicalize', seconds: 0.01 }, { pass: 'cse', seconds: 0.01 }],
  },
];
const CTX = { fn: 'mlp', file: 'mlp.mlir', cspSource: 'vscode-resource:', nonce: 'N0nce', styleUri: 's.css', scriptUri: 'p.js' };

function step(index: number, pass: string | null, level: string): PassStep {
  return { index, pass, level, seconds: 0, ops_before: 1, ops_after: 1, changed: true, lines: [], counts: {}, summary: '' };
}

test('a finding becomes the pass (without its options), its level and the error value', () => {
  const d = divergenceOf(FOUND);
  assert.ok(d);
  assert.deepEqual([d.pass, d.spelling, d.level, d.position, d.total, d.kind], ['canonicalize', FOUND.pass, 'linalg', 5, 13, 'diverged']);
  assert.equal(d.value, 'max |Δ| 0.0113 · 94832 ulp');
  assert.ok(isGuilty(d, 'linalg', 'canonicalize') && !isGuilty(d, 'tosa', 'canonicalize') && !isGuilty(d, 'linalg', 'cse'));
  // A crash has no numbers: its kind is the value. No pass to blame, or an error: nothing to mark.
  assert.equal(divergenceOf({ ...FOUND, kind: 'crashed', difference: null })?.value, 'crashed');
  assert.equal(divergenceOf({ ...FOUND, kind: null }), undefined);
  assert.equal(divergenceOf({ error: 'cancelled' }), undefined);
  assert.equal(renderDivergence(undefined), '');
});

test('the pass times mark the guilty pass of the guilty level only, with the error value', () => {
  const d = divergenceOf(FOUND);
  const html = renderPassTimes(LEVELS, d);
  assert.equal((html.match(/class="guilty"/g) ?? []).length, 1);
  assert.match(html, /<tr class="guilty" data-level="linalg" data-pass="canonicalize">.*✗ diverged · max \|Δ\| 0\.0113 · 94832 ulp/);
  assert.doesNotMatch(renderPassTimes(LEVELS), /guilty/);
  const chart = renderChart(LEVELS, d);
  assert.match(chart, /<div class="row guilty" data-level="linalg">/);
  assert.equal((chart.match(/guilty-mark/g) ?? []).length, 1);
});

test('the pass explorer marks the guilty step and shows it first', () => {
  const steps = [step(0, null, 'hlo'), step(1, 'convert-hlo-to-tosa', 'tosa'), step(2, 'canonicalize', 'tosa'),
    step(3, 'convert-tosa-to-linalg', 'linalg'), step(4, 'canonicalize', 'linalg')];
  const html = renderPassExplorer(steps, divergenceOf(FOUND));
  assert.match(html, /data-current="4"/);
  assert.match(html, /<li class="px-item changed guilty on" data-step="4"/);
  assert.equal((html.match(/px-item [a-z]+ guilty/g) ?? []).length, 1);
  assert.match(renderPassExplorer(steps), /data-current="1"/);
  // A pass that changed nothing without the injected fault (the view lowers without it) still shows.
  const unchanged = steps.map((s) => (s.index === 4 ? { ...s, changed: false } : s));
  assert.match(renderPassExplorer(unchanged, divergenceOf(FOUND)), /<li class="px-item unchanged guilty on" data-step="4" data-changed="0">/);
  assert.match(renderPassExplorer(unchanged), /<li class="px-item unchanged" data-step="4" data-changed="0" hidden>/);
});

test('the view has a banner with the pass and the value, and marks the level\'s column', () => {
  const html = renderPipeline({ function: 'mlp', levels: LEVELS }, { ...CTX, divergence: divergenceOf(FOUND) });
  assert.match(html, /<div class="divergence" id="divergence" data-level="linalg" data-pass="canonicalize">/);
  assert.match(html, /pass 5 of 13, canonicalize\{max-num-rewrites=-1\} \(step to linalg\), diverged/);
  assert.match(html, /<article class="level fam-border-linalg guilty" data-col="2" data-level="linalg">/);
  assert.doesNotMatch(renderPipeline({ function: 'mlp', levels: LEVELS }, CTX), /guilty|id="divergence"/);
});

// As `mlirtext.bisect` answers with devices ['local-task'] and --debug-wrong-kernel=local-task:mlp_dispatch_2.
const ON_A_DEVICE: BisectResult = {
  function: 'mlp',
  kind: null,
  dispatch: {
    device: 'local-task', index: 1, total: 2, name: 'mlp#1', kernel: 'mlp_dispatch_2',
    summary: 'on local-task, dispatch 1 of 2 (kernel @mlp_dispatch_2) differs from the reference, fed the reference\'s inputs',
    difference: { max_abs: 0.0025177001953125, max_rel: 0.000135, max_ulp: 21164 },
    ops: [{ op: 'stablehlo.dot_general', line: 4 }, { op: 'stablehlo.add', line: 10 }],
    markers: [],
  },
};

test('a dispatch a device got wrong: a banner with its kernel and its source ops, each revealed on a click', () => {
  const d = dispatchDivergenceOf(ON_A_DEVICE);
  assert.ok(d);
  assert.deepEqual([d.name, d.device, d.kernel, d.value], ['mlp#1', 'local-task', 'mlp_dispatch_2', 'max |Δ| 0.00252 · 21164 ulp']);
  assert.equal(divergenceOf(ON_A_DEVICE), undefined);   // (no pass to blame)
  const html = renderDispatchDivergence(d);
  assert.match(html, /<div class="divergence" id="dispatch-divergence" data-dispatch="mlp#1" data-device="local-task">/);
  assert.match(html, /dispatch 1 of 2 \(mlp#1\) on local-task, kernel @mlp_dispatch_2, differs from the reference/);
  assert.deepEqual([...html.matchAll(/<li class="source-op" data-origin="(\d+)"[^>]*>([\w.]+)/g)].map((m) => [m[1], m[2]]),
    [['4', 'stablehlo.dot_general'], ['10', 'stablehlo.add']]);
  assert.match(html, /<b class="dispatch-head" data-origin="4">/);
  assert.equal(dispatchDivergenceOf(FOUND), undefined);
  assert.equal(dispatchDivergenceOf({ ...ON_A_DEVICE, error: 'cancelled' }), undefined);
  assert.equal(renderDispatchDivergence(undefined), '');
  const view = renderPipeline({ function: 'mlp', levels: LEVELS }, { ...CTX, dispatch: d });
  assert.match(view, /id="dispatch-divergence"/);
  assert.doesNotMatch(view, /id="divergence"/);
});

test('the profile marks the dispatch a device got wrong', () => {
  const row = (name: string, kernel: string) => ({ name, kernel, calls: 1, total: 0.01, median: 0.01, share: 0.4, ops: ['stablehlo.add'], lines: [4] });
  const profile = { device: 'local-task', calls: 1, seconds: 0.02, host_share: 0.2, rows: [row('mlp#0', 'mlp_dispatch_0'), row('mlp#1', 'mlp_dispatch_2')] };
  const html = renderProfile(profile, dispatchDivergenceOf(ON_A_DEVICE));
  assert.match(html, /<tr class="dispatch guilty" data-dispatch="mlp#1"/);
  assert.match(html, /<tr class="dispatch" data-dispatch="mlp#0"/);
  assert.equal((html.match(/guilty-mark/g) ?? []).length, 1);
  assert.doesNotMatch(renderProfile(profile), /guilty/);
});
