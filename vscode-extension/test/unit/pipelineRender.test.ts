import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, highlightLine, namedDefinitions, opName, sourceLocation } from '../../src/pipeline/highlight';
import { PipelineResult, allDialects, dialectCounts, dialectFamily, levelSeconds, totalOps } from '../../src/pipeline/model';
import { columns, renderChart, renderPassTimes, renderPipeline, renderRun } from '../../src/pipeline/render';

// Trimmed from a real `mlirtext.pipeline` answer for @mlp (mlirtext/examples/mlp_stablehlo.mlir).
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
    },
    {
      level: 'tosa',
      text: 'func.func @mlp(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %zero = tosa.const values(dense<0.0> : tensor<4xf32>) : () -> tensor<4xf32>\n  %0 = tosa.add %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n',
      op_counts: { func: { 'func.func': 1, 'func.return': 1 }, tosa: { 'tosa.add': 1, 'tosa.const': 3 } },
      passes: [
        { pass: 'convert-hlo-to-tosa', seconds: 0.1 },
        { pass: 'canonicalize', seconds: 0.005 },
      ],
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

test('the page: every level, the chart, the passes, the run, and a script only with the nonce', () => {
  const html = renderPipeline(RESULT, { ...CTX, run: { outputs: ['4xf32=1 1 1 1'], seconds: 0.001 } });
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

test('lines carry what a click follows: named results and op names', () => {
  const html = renderPipeline(RESULT, CTX);
  assert.match(html, /<div class="ln op" data-line="1" data-defs="%zero" data-op="tosa.const">/);
  assert.match(html, /<div class="ln op" data-line="2" data-op="stablehlo.add">/); // %0 is renumbered at each level
});

test('the chart scales bars to the largest level and labels wide segments', () => {
  const chart = renderChart(RESULT.levels);
  assert.match(chart, /class="seg fam-tosa" style="width:66\.67%" title="tosa: 4 ops">tosa</);
  assert.match(chart, /class="seg fam-hlo" style="width:33\.33%" title="stablehlo: 2 ops">stablehlo</);
  assert.match(renderPassTimes(RESULT.levels), /style="width:100\.00%"><\/span><\/td><td class="num">100\.0 ms/);
  assert.match(renderPassTimes([RESULT.levels[0]]), /no passes ran/);
});

test('the run panel: results, or the error', () => {
  assert.match(renderRun({ error: 'no <input>' }), /<p class="error">no &lt;input&gt;<\/p>/);
  assert.match(renderRun(undefined), /not run/);
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

test('what a line says about itself: named results, op, location', () => {
  assert.deepEqual(namedDefinitions('  %h, %1, %c:2 = foo.bar'), ['%h', '%c']);
  assert.equal(opName('  %0 = "stablehlo.add"(%a, %b) : ...'), 'stablehlo.add');
  assert.equal(opName('  linalg.yield %0 : f32'), 'linalg.yield');
  assert.equal(opName('  ^bb1:'), undefined);
  assert.equal(sourceLocation('  %0 = tosa.add %a, %b loc("m.mlir":7:8)'), '7:8');
});
