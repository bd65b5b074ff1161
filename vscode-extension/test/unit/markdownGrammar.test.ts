// MLIR inside Markdown fences: the injection grammar, run by VS Code's engine (vscode-textmate
// with oniguruma) over a stand-in Markdown grammar, and its registration in package.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const ROOT = join(__dirname, '..', '..', '..');
const INJECTION = 'syntaxes/mlir-markdown.tmLanguage.json';
const raw = JSON.parse(readFileSync(join(ROOT, INJECTION), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
let markdown: textmate.IGrammar;

before(async () => {
  const wasm = readFileSync(join(ROOT, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const files: Record<string, string> = {
    'source.mlir': 'syntaxes/mlir.tmLanguage.json',
    [raw.scopeName]: INJECTION,
  };
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) => {
      if (scope === 'text.html.markdown') {
        // Markdown's own rules do not matter here: only what the injection adds to its text.
        return textmate.parseRawGrammar(JSON.stringify({ scopeName: scope, patterns: [] }), 'markdown.json');
      }
      return files[scope] ? textmate.parseRawGrammar(readFileSync(join(ROOT, files[scope]), 'utf8'), files[scope]) : null;
    },
    getInjections: (scope: string) =>
      pkg.contributes.grammars.filter((g: any) => g.injectTo?.includes(scope)).map((g: any) => g.scopeName),
  });
  markdown = (await registry.loadGrammar('text.html.markdown'))!;
});

/** The scopes of the first token of each line that starts at `token` (or contains it). */
function scopesOf(lines: string[], token: string): string[] {
  let state = textmate.INITIAL;
  const found: string[] = [];
  for (const line of lines) {
    const r = markdown.tokenizeLine(line, state);
    state = r.ruleStack;
    const at = line.indexOf(token);
    const t = at >= 0 ? r.tokens.find((t) => t.startIndex <= at && at < t.endIndex) : undefined;
    if (t) found.push(t.scopes.join(' '));
  }
  return found;
}

test('the injection is registered as package.json says', () => {
  const entry = pkg.contributes.grammars.find((g: any) => g.path === `./${INJECTION}`);
  assert.ok(entry, 'package.json lists the injection grammar');
  assert.equal(entry.scopeName, raw.scopeName);
  assert.deepEqual(entry.injectTo, ['text.html.markdown']);
  assert.equal(raw.injectionSelector, 'L:text.html.markdown');
  const mlir = pkg.contributes.grammars.find((g: any) => g.language === 'mlir');
  const inner = raw.repository['fenced-mlir'].patterns[0];
  assert.equal(inner.patterns[0].include, mlir.scopeName);
  assert.equal(entry.embeddedLanguages[inner.contentName], 'mlir');
  assert.equal(inner.contentName, 'meta.embedded.block.mlir');
});

test('the fence regex takes mlir info strings only', () => {
  const begin = new oniguruma.OnigScanner([raw.repository['fenced-mlir'].begin]);
  const matches = (line: string) => begin.findNextMatchSync(line, 0) !== null;
  for (const line of ['```mlir', '~~~mlir', '  ```mlir', '````MLIR', '```mlir {.numberLines}', '```mlir title="x"']) {
    assert.ok(matches(line), line);
  }
  for (const line of ['```mlirx', '```', '```python', '~~~ml', 'mlir', '``mlir']) {
    assert.ok(!matches(line), line);
  }
});

test('ops in an mlir fence are coloured as in a .mlir file, and only there', () => {
  const doc = [
    '# Notes',
    'stablehlo.add in prose',
    '```mlir',
    'func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {',
    '  %0 = stablehlo.add %a, %a : tensor<4xf32>',
    '  return %0 : tensor<4xf32>',
    '}',
    '```',
    'stablehlo.add after the fence',
    '~~~mlir',
    '%1 = stablehlo.add %x, %x : tensor<f32>',
    '~~~',
    '```mlirx',
    '%2 = stablehlo.add %x, %x : tensor<f32>',
    '```',
  ];
  const [prose, inFence, after, inTilde, inOther] = scopesOf(doc, 'stablehlo.add');
  assert.doesNotMatch(prose, /\.mlir/);
  assert.match(inFence, /meta\.embedded\.block\.mlir .*entity\.name\.function\.op\.hlo\.dialect\.mlir/);
  assert.doesNotMatch(after, /\.mlir/, 'the closing fence ends the block');
  assert.match(inTilde, /op\.hlo/);
  assert.doesNotMatch(inOther, /\.mlir/);
  assert.match(scopesOf(doc, '%0')[0], /variable\.other\.ssa/);
});
