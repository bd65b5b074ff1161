/**
 * A small highlighter for the pipeline view's text (MLIR at every level, LLVM IR
 * for the target), producing escaped HTML with classed spans. The editor uses the
 * TextMate grammar; the webview cannot, so this covers the same token classes. Pure.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

// One alternation, tried left to right at each position: the first group that matches names the class.
const MLIR_TOKENS: [string, RegExp][] = [
  ['cm', /\/\/.*$/],
  ['st', /"(?:[^"\\]|\\.)*"/],
  ['op', /\b(?:[a-z_][\w$]*)\.[A-Za-z_][\w$.]*(?=[\s("<{:]|$)/],
  ['ssa', /%[\w$.\-]+(?:#\d+)?/],
  ['bb', /\^[\w$.\-]+/],
  ['sym', /@[\w$.\-]+/],
  ['ty', /\b(?:tensor|memref|vector|complex|tuple)\b|![\w$.]+|\b(?:[su]?i\d+|bf16|f\d+|index|ptr|void|label|float|double|half)\b/],
  ['lit', /\b(?:dense|dense_resource|array|sparse|affine_map|true|false|zeroinitializer|null|undef)\b/],
  ['num', /\b0x[0-9A-Fa-f]+\b|[-+]?\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\b/],
  ['kw', /\b(?:define|declare|call|br|ret|phi|load|store|getelementptr|alloca|icmp|fcmp|private|constant|global|attributes|ins|outs|to|step|iter_args|into)\b/],
];
const COMBINED = new RegExp(MLIR_TOKENS.map(([, r]) => `(${r.source})`).join('|'), 'g');

/** One line of text as HTML with spans `class="t-<kind>"`. */
export function highlightLine(line: string): string {
  let out = '';
  let last = 0;
  COMBINED.lastIndex = 0;
  for (let m = COMBINED.exec(line); m; m = COMBINED.exec(line)) {
    if (m[0].length === 0) {
      COMBINED.lastIndex++;
      continue;
    }
    const kind = MLIR_TOKENS[m.slice(1).findIndex((g) => g !== undefined)][0];
    out += escapeHtml(line.slice(last, m.index)) + `<span class="t-${kind}">${escapeHtml(m[0])}</span>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(line.slice(last));
}

/**
 * The values a line defines that can be followed across levels: named results
 * (`%zero`, `%h`) keep their names through rewrites, numbered ones (`%3`) are
 * renumbered at every level and say nothing, so only names are kept.
 */
export function namedDefinitions(line: string): string[] {
  const m = /^\s*((?:%[\w$.\-]+(?::\d+)?\s*,\s*)*%[\w$.\-]+(?::\d+)?)\s*=/.exec(line);
  if (!m) {
    return [];
  }
  return m[1]
    .split(',')
    .map((s) => s.trim().replace(/:\d+$/, ''))
    .filter((s) => !/^%\d+$/.test(s));
}

/** The op a line holds (`stablehlo.add`), for the op's tooltip and the click. */
export function opName(line: string): string | undefined {
  const m = /^\s*(?:(?:%[\w$.\-]+(?::\d+)?\s*,\s*)*%[\w$.\-]+(?::\d+)?\s*=\s*)?"?([a-z_][\w$]*\.[A-Za-z_][\w$.]*)/.exec(line);
  return m ? m[1] : undefined;
}
