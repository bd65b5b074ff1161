/**
 * What the server's `mlirtext.testItems` and `mlirtext.runTests` answer, the ids the Testing panel
 * gives their items, and which of a file's tests a run request names. Pure: no vscode import,
 * unit tested with `node --test`.
 */

/** [line, UTF-16 character] at both ends, 0-based, as the server counts. */
export type ServerRange = [number, number, number, number];

export interface ServerTestItem {
  /** `chunk:N` or `function:N:name` (N: the `// -----` chunk, from 0). */
  id: string;
  kind: 'chunk' | 'function';
  label: string;
  range: ServerRange;
  chunk: number;
  function: string | null;
}

export interface ItemsAnswer {
  items: ServerTestItem[];
  error: string | null;
}

export interface ServerFailure {
  message: string;
  range: ServerRange;
  /** Either may be empty: a diagnostic nothing expected, a check that compared no values. */
  expected: string;
  actual: string;
}

export interface ServerResult {
  id: string;
  status: 'passed' | 'failed' | 'error';
  message: string;
  seconds: number;
  failures: ServerFailure[];
}

export interface RunAnswer {
  results: ServerResult[];
  error: string | null;
}

/** The panel's id of a test: its file and the server's id (a file's own item is its URI). */
export function testId(fileUri: string, serverId: string): string {
  return `${fileUri}#${serverId}`;
}

/** The server's id back from the panel's id of a test; undefined for a file's item. */
export function serverIdOf(fileUri: string, panelId: string): string | undefined {
  return panelId.startsWith(`${fileUri}#`) ? panelId.slice(fileUri.length + 1) : undefined;
}

/** What one file's run sends: the ids of its tests that were asked for and not excluded. */
export function idsToRun(children: string[], asked: 'file' | string[], excluded: Set<string>): string[] {
  const wanted = asked === 'file' ? children : asked.filter((id) => children.includes(id));
  return [...new Set(wanted)].filter((id) => !excluded.has(id));
}

/** A failure as the panel shows it: a diff when it has two sides, its message otherwise. */
export function failureMessage(f: ServerFailure): { message: string; diff?: { expected: string; actual: string } } {
  if (f.expected || f.actual) {
    return { message: f.message, diff: { expected: f.expected, actual: f.actual } };
  }
  return { message: f.message };
}

/** The answer when it is one, with what went wrong otherwise (an older server, a broken answer). */
export function checkedItems(answer: unknown): ItemsAnswer {
  const a = answer as Partial<ItemsAnswer> | null | undefined;
  if (!a || !Array.isArray(a.items)) {
    return { items: [], error: a?.error ?? 'the language server gave no test items' };
  }
  return { items: a.items, error: a.error ?? null };
}

export function checkedResults(answer: unknown): RunAnswer {
  const a = answer as Partial<RunAnswer> | null | undefined;
  if (!a || !Array.isArray(a.results)) {
    return { results: [], error: a?.error ?? 'the language server gave no test results' };
  }
  return { results: a.results, error: a.error ?? null };
}

/** Calls `fn` once `waitMs` after the last of a burst of `schedule(key)` calls for one key. */
export class Debouncer {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly waitMs: number, private readonly fn: (key: string) => void) {}

  schedule(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.fn(key);
      }, this.waitMs),
    );
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
