/**
 * Functions of an MLIR document found from its text alone, so that commands know
 * "the function under the cursor" even while the server is busy or off. Pure.
 */

export interface FunctionInfo {
  name: string;
  /** 0-based line of the `func.func @name` header. */
  line: number;
  /** 0-based line of the closing brace (the header line for a declaration). */
  endLine: number;
  /** The argument types as written, e.g. ["tensor<4x8xf32>", "f32"]. */
  argTypes: string[];
}

const HEADER = /^\s*(?:func\.func|llvm\.func|func)\s+(?:(?:private|public|nested)\s+)?@("(?:[^"\\]|\\.)*"|[\w$.\-]+)/;

/** Every function header in `text`, with the line where its body closes. */
export function findFunctions(text: string): FunctionInfo[] {
  const lines = text.split(/\r?\n/);
  const out: FunctionInfo[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = HEADER.exec(lines[i]);
    if (!m) {
      continue;
    }
    const name = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
    const { endLine, header } = scanBody(lines, i);
    out.push({ name, line: i, endLine, argTypes: argumentTypes(header) });
  }
  return out;
}

/** The innermost function whose lines contain `line`, else undefined. */
export function functionAtLine(functions: FunctionInfo[], line: number): FunctionInfo | undefined {
  let best: FunctionInfo | undefined;
  for (const f of functions) {
    if (f.line <= line && line <= f.endLine && (!best || f.line >= best.line)) {
      best = f;
    }
  }
  return best;
}

/**
 * Follow brackets from the header line to the brace that closes the body; also return
 * the header text. A header whose signature closes without a `{` following is a
 * declaration and ends on its own line.
 */
function scanBody(lines: string[], start: number): { endLine: number; header: string } {
  let depth = 0; // braces
  let parens = 0;
  let attrDepth = 0;
  let opened = false;
  let header = '';
  for (let i = start; i < lines.length; i++) {
    const line = stripComment(lines[i]);
    for (let j = 0; j < line.length; j++) {
      const c = line[j];
      if (c === '"') {
        const close = skipString(line, j);
        if (!opened) {
          header += line.slice(j, close + 1);
        }
        j = close;
        continue;
      }
      if (attrDepth > 0 || (!opened && c === '{' && /attributes\s*$/.test(header))) {
        // `attributes {...}` before the body belongs to the header, not the body.
        header += c;
        attrDepth += c === '{' ? 1 : c === '}' ? -1 : 0;
        continue;
      }
      if (!opened && c !== '{') {
        header += c;
      }
      if (c === '(') {
        parens++;
      } else if (c === ')') {
        parens--;
      } else if (c === '{') {
        // Attribute dicts (`attributes {...}`) open at depth 0 too: count all braces alike.
        opened = true;
        depth++;
      } else if (c === '}') {
        depth--;
        if (opened && depth === 0) {
          return { endLine: i, header };
        }
      }
    }
    if (!opened) {
      header += ' ';
      const next = nextCodeLine(lines, i + 1);
      if (parens === 0 && header.includes(')') && !/^\s*(\{|->|attributes\b)/.test(next) && !/(->|,|attributes)\s*$/.test(line)) {
        return { endLine: i, header }; // a declaration: no body follows
      }
    }
  }
  return { endLine: opened ? lines.length - 1 : start, header };
}

function nextCodeLine(lines: string[], from: number): string {
  for (let i = from; i < lines.length; i++) {
    const code = stripComment(lines[i]).trim();
    if (code) {
      return code;
    }
  }
  return '';
}

function stripComment(line: string): string {
  let inString = false;
  for (let j = 0; j < line.length; j++) {
    if (line[j] === '"' && line[j - 1] !== '\\') {
      inString = !inString;
    } else if (!inString && line[j] === '/' && line[j + 1] === '/') {
      return line.slice(0, j);
    }
  }
  return line;
}

function skipString(line: string, at: number): number {
  for (let j = at + 1; j < line.length; j++) {
    if (line[j] === '\\') {
      j++;
    } else if (line[j] === '"') {
      return j;
    }
  }
  return line.length;
}

/** `(%x: tensor<4xf32>, %y: f32 {attr}) -> ...` -> ["tensor<4xf32>", "f32"]. */
export function argumentTypes(header: string): string[] {
  const open = header.indexOf('(');
  if (open < 0) {
    return [];
  }
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let j = open + 1; j < header.length; j++) {
    const c = header[j];
    if ('(<[{'.includes(c)) {
      depth++;
    } else if (')>]}'.includes(c)) {
      if (depth === 0 && c === ')') {
        parts.push(current);
        break;
      }
      depth--;
    }
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  return parts
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => {
      const named = /^%[\w$.\-]+\s*:\s*(.*)$/.exec(p);
      const type = (named ? named[1] : p).trim();
      return stripTrailingAttributes(type);
    });
}

function stripTrailingAttributes(type: string): string {
  let depth = 0;
  for (let j = 0; j < type.length; j++) {
    const c = type[j];
    if ('(<['.includes(c)) {
      depth++;
    } else if (')>]'.includes(c)) {
      depth--;
    } else if (depth === 0 && (c === '{' || c === ' ')) {
      return type.slice(0, j).trim();
    }
  }
  return type.trim();
}

/** Every value a line defines (`%a, %b = ...` or `%r:2 = ...`), numbered ones included. */
export function definedValues(line: string): string[] {
  const m = /^\s*((?:%[\w$.\-]+(?::\d+)?\s*,\s*)*%[\w$.\-]+(?::\d+)?)\s*=/.exec(line);
  return m ? m[1].split(',').map((s) => s.trim().replace(/:\d+$/, '')) : [];
}

/** The line inside `fn` where `%name` is defined (an op result or an argument), else undefined. */
export function definitionLine(lines: string[], fn: FunctionInfo, name: string): number | undefined {
  for (let i = fn.line; i <= fn.endLine && i < lines.length; i++) {
    if (definedValues(lines[i]).includes(name)) {
      return i;
    }
  }
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const argument = new RegExp(`${escaped}\\s*:`);
  for (let i = fn.line; i <= fn.endLine && i < lines.length; i++) {
    if (argument.test(lines[i]) && !definedValues(lines[i]).length) {
      return i;
    }
  }
  return undefined;
}
