import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, highlightLine, namedDefinitions, opName } from '../../src/pipeline/highlight';
import { PipelineResult, allDialects, dialectCounts, dialectFamily, kernelSummary, levelSeconds, totalOps } from '../../src/pipeline/model';
import { columns, renderChart, renderDeviceRuns, renderPassTimes, renderPipeline, renderTargets } from '../../src/pipeline/render';

// Trimmed from a real `mlirtext.pipeline` answer for @mlp (examples/mlp_stablehlo.mlir).
const RESULT: PipelineResult & { levels: PipelineResult['levels'] & object } = {
  function: 'mlp',
  error: null,
  target: "define ptr @mlp(ptr %x) {\nentry:\n  ret ptr %x\n}\n",
  levels: [
    {
      level: 'hlo',
      text: 'func.func @mlp(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>\n  %0 = stablehlo.add %x, %zero : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n',
      op_counts: { func: { 'func.func': 1, 'func.return': 1 }, stablehlo: { 'stablehlo.add': 1, 'stablehlo.constant': 1 } },
      passes: [],
      origins: [1, 2, 3, 4, null],
    },
    {
      level: 'tosa',
      text: 'func.func @mlp(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %zero = tosa.const values(dense<0.0> : tensor<4xf32>) : () -> tensor<4xf32>\n  %0 = tosa.add %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n',
      op_counts: { func: { 'func.func': 1, 'func.return': 1 }, tosa: { 'tosa.add': 1, 'tosa.const': 3 } },
      passes: [
        { pass: 'convert-hlo-to-tosa', seconds: 0.1 },
        { pass: 'canonicalize', seconds: 0.005 },
      ],
      origins: [1, 2, 3, 4, null],
    },
  ],
};
const CTX = { fn: 'mlp', file: 'mlp.mlir', cspSource: 'vscode-resource:', nonce: 'N0nce', styleUri: 's.css', scriptUri: 'p.js' };

test('counts: per dialect, the frame (func) last; totals and times per level', () => {
  const [hlo, tosa] = RESULT.levels;
  assert.deepEqual(dialectCounts(tosa), [
    { dialect: 'tosa', count: 4 },
    { dialect: 'func', count: 2 },
  ]);
  assert.equal(totalOps(hlo), 4);
  assert.ok(Math.abs(levelSeconds(tosa) - 0.105) < 1e-12);
  assert.deepEqual(allDialects(RESULT.levels), ['stablehlo', 'func', 'tosa']);
  assert.equal(dialectFamily('mhlo'), 'hlo');
  assert.equal(dialectFamily('memref'), 'loops');
  assert.equal(dialectFamily('weird'), 'other');
});

test('one column per level, then the target code', () => {
  const cols = columns(RESULT);
  assert.deepEqual(cols.map((c) => c.id), ['hlo', 'tosa', 'llvm-ir']);
  assert.equal(cols[0].source, true);
  assert.match(cols[1].detail, /^6 ops · 105\.0 ms$/);
  assert.equal(columns({ ...RESULT, target: null }).length, 2);
});

const DEVICE_RUNS = {
  function: 'mlp',
  runs: [
    { device: 'reference', outputs: ['4xf32=1 1 1 1'], seconds: 0.004, match: null, max_diff: null, error: null },
    { device: 'local-sync', outputs: ['4xf32=1 1 1 1'], seconds: 0.0002, compile_seconds: 0.4, match: true, max_diff: 7.2e-7, error: null },
    { device: 'local-task', outputs: ['4xf32=1 1 1 2'], seconds: 0.001, match: false, max_diff: 1, error: null },
  ],
};

test('the page: every level, the chart, the passes, the device runs, and a script only with the nonce', () => {
  const html = renderPipeline(RESULT, { ...CTX, devices: DEVICE_RUNS });
  for (const level of ['hlo', 'tosa', 'llvm-ir']) {
    assert.match(html, new RegExp(`<article class="level[^"]*" data-col="\\d" data-level="${level}"`));
  }
  assert.match(html, /script-src 'nonce-N0nce'/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="N0nce" src="p.js">/);
  assert.match(html, /convert-hlo-to-tosa/);
  assert.match(html, /4xf32=1 1 1 1/);
  assert.match(html, /hlo → tosa → LLVM IR/);
  assert.doesNotMatch(html, /https?:\/\//); // self-contained: nothing from the network
});

test('lines carry what a click follows: source lines, named results and op names', () => {
  const html = renderPipeline(RESULT, CTX);
  assert.match(html, /<div class="ln op" data-line="1" data-defs="%zero" data-origin="2" data-op="tosa.const">/);
  assert.match(html, /<div class="ln op" data-line="2" data-origin="3" data-op="stablehlo.add">/); // %0 is renumbered at each level
  assert.match(html, /<div class="ln" data-line="4">}<\/div>/); // no op, no origin
  assert.doesNotMatch(html.slice(html.indexOf('data-level="llvm-ir"')), /data-origin/); // target code: none known
});

test('device runs: time, speed-up over the reference, match with the largest difference', () => {
  const html = renderDeviceRuns(DEVICE_RUNS);
  assert.match(html, /data-device="reference" data-match="reference"><td class="dev">reference<\/td><td class="num">4\.00 ms/);
  assert.match(html, /data-device="local-sync" data-match="yes">.*title="compiled in 400\.0 ms">200 µs<\/td><td class="num muted">20×<\/td>.*✓ matches.*max \|Δ\| 7\.2e-7/);
  assert.match(html, /data-device="local-task" data-match="no">.*✗ differs.*max \|Δ\| 1</);
  assert.match(html, /result\[0\]<\/span> <code>4xf32=1 1 1 1<\/code>/); // the reference's
  assert.match(renderDeviceRuns(undefined), /class="muted pending">running on/);
  assert.match(renderDeviceRuns({ error: 'no <fn>' }), /<p class="error">no &lt;fn&gt;<\/p>/);
  const failed = renderDeviceRuns({ runs: [{ device: 'local-sync', error: 'cannot compile for llvm-cpu: dynamic shape' }] });
  assert.match(failed, /data-match="error"><td class="dev">local-sync<\/td><td colspan="3" class="error">cannot compile/);
});

test('the chart scales bars to the largest level and labels wide segments', () => {
  const chart = renderChart(RESULT.levels);
  assert.match(chart, /class="seg fam-tosa" style="width:66\.67%" title="tosa: 4 ops">tosa</);
  assert.match(chart, /class="seg fam-hlo" style="width:33\.33%" title="stablehlo: 2 ops">stablehlo</);
  assert.match(renderPassTimes(RESULT.levels), /style="width:100\.00%"><\/span><\/td><td class="num">100\.0 ms/);
  assert.match(renderPassTimes([RESULT.levels[0]]), /no passes ran/);
});


test('highlighting escapes the text and classes each token', () => {
  const line = '  %0 = stablehlo.add %x, %zero : tensor<4xf32> // a < b';
  const html = highlightLine(line);
  assert.equal(html.replace(/<[^>]+>/g, ''), escapeHtml(line));
  assert.match(html, /<span class="t-op">stablehlo\.add<\/span>/);
  assert.match(html, /<span class="t-ssa">%zero<\/span>/);
  assert.match(html, /<span class="t-ty">tensor<\/span>&lt;/);
  assert.match(html, /<span class="t-cm">\/\/ a &lt; b<\/span>/);
});

test('what a line says about itself: named results, op', () => {
  assert.deepEqual(namedDefinitions('  %h, %1, %c:2 = foo.bar'), ['%h', '%c']);
  assert.equal(opName('  %0 = "stablehlo.add"(%a, %b) : ...'), 'stablehlo.add');
  assert.equal(opName('  linalg.yield %0 : f32'), 'linalg.yield');
  assert.equal(opName('  ^bb1:'), undefined);
});

// Trimmed from a real answer's `dispatches` and `targets` for @mlp.
const TARGETS: NonNullable<PipelineResult['targets']> = [
  {
    target: 'llvm-cpu', arch: 'znver3', language: 'llvm', code_name: 'LLVM IR', error: null, seconds: 0.8,
    kernels: [
      {
        name: 'mlp_dispatch_0', dispatch: 0, entry: 'mlp_dispatch_0', threads: null, workgroups: 1, workgroup_size: null,
        size: 978, implementation: 'micro-kernel: matmul f32, addf+maximumf epilogue', lines: [5, 8],
        code: 'define void @mlp_dispatch_0(ptr noalias %in0, i64 %lo, i64 %hi) {\nentry:\n  ret void\n}\n',
      },
    ],
  },
  {
    target: 'cuda', arch: 'sm_80', language: 'ptx', code_name: 'PTX', error: null, seconds: 0.1,
    kernels: [
      {
        name: 'mlp_dispatch_1', dispatch: 1, entry: 'mlp_dispatch_1', threads: 64, workgroups: 1, workgroup_size: 64,
        size: 1054, implementation: 'one thread per output element of axes 4x16', lines: [8],
        code: '.visible .entry mlp_dispatch_1(\n\t.param .u64 .ptr .global .align 1 p0\n)\n{\n\tsetp.gt.u64 %p1, %rd6, 63;\n\tret;\n}\n',
      },
    ],
  },
  { target: 'vulkan-spirv', arch: 'vulkan1.3', language: 'spirv', code_name: 'SPIR-V assembly', error: 'spirv-as not found (Debian spirv-tools; `make gpu-deps` installs it)', seconds: 0, kernels: [] },
];

test('the target column: a select of the targets, the first one shown, each kernel with its launch and code', () => {
  const html = renderPipeline({ ...RESULT, targets: TARGETS }, CTX);
  assert.match(html, /<article class="level targets fam-border-llvm" data-col="3" data-level="targets">/);
  assert.match(html, /<button class="step fam-llvm" data-col="3">targets<\/button>/);
  assert.match(
    html,
    /<select id="target-select" aria-label="target"><option value="llvm-cpu" selected>llvm-cpu<\/option><option value="cuda">cuda<\/option><option value="vulkan-spirv">vulkan-spirv \(no code\)<\/option><\/select>/,
  );
  // Only the selected target's kernels are visible; the others are there, hidden, for the select.
  assert.match(html, /<section class="target-code" data-target="llvm-cpu">/);
  assert.match(html, /<section class="target-code" data-target="cuda" hidden>/);
  assert.match(html, /<p class="muted summary">1 kernel · LLVM IR for znver3 · 800\.0 ms<\/p>/);
  // A kernel's header is an op line: a click follows its first source op (line 5) like any other op.
  assert.match(
    html,
    /<div class="ln op kernel-head" data-line="0" data-origin="5" data-op="kernel"><b>mlp_dispatch_0<\/b> <span class="muted">dispatch 0 · entry mlp_dispatch_0 · 978 B<\/span><\/div><div class="impl muted">micro-kernel: matmul f32, addf\+maximumf epilogue<\/div>/,
  );
  assert.match(html, /dispatch 1 · entry mlp_dispatch_1 · 64 threads \(1 workgroup of 64\) · 1054 B/);
  // Code is escaped text, a line per line (tabs kept), not MLIR-highlighted.
  assert.match(html, /<div class="ln">define void @mlp_dispatch_0\(ptr noalias %in0, i64 %lo, i64 %hi\) \{<\/div><div class="ln">entry:<\/div>/);
  assert.match(html, /<div class="ln">\tsetp\.gt\.u64 %p1, %rd6, 63;<\/div>/);
  assert.match(html, /data-target="vulkan-spirv" hidden><p class="error">spirv-as not found/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
});

test('no targets in the answer (an older server): no target column', () => {
  const html = renderPipeline(RESULT, CTX);
  assert.doesNotMatch(html, /target-select|data-level="targets"/);
  assert.equal(kernelSummary({ ...TARGETS[1].kernels[0], size: 20480 }), 'entry mlp_dispatch_1 · 64 threads (1 workgroup of 64) · 20.0 KiB');
});

test('the target column while the targets compile, and its content when they come (or fail)', () => {
  const html = renderPipeline(RESULT, { ...CTX, targets: 'pending' });
  assert.match(html, /<article class="level targets fam-border-llvm" data-col="3" data-level="targets"><h3>.*<p class="muted pending">compiling for each target…<\/p>/s);
  assert.match(html, /<button class="step fam-llvm" data-col="3">targets<\/button>/);
  // What the webview puts into the column when `mlirtext.targetCode` answers.
  const later = renderTargets({ function: 'mlp', dispatches: [], targets: TARGETS, error: null });
  assert.match(later, /^<h3><span class="name">target <select id="target-select"/);
  assert.match(later, /<section class="target-code" data-target="cuda" hidden>/);
  assert.equal(renderPipeline({ ...RESULT, targets: TARGETS }, CTX).includes(later), true); // the same content either way
  assert.match(renderTargets({ error: 'no function named @f in a.mlir' }), /<p class="error">no function named @f in a\.mlir<\/p>/);
});
