/**
 * The server offers lowering as code actions whose command is
 * `mlirtext.applyAction` with arguments [uri, version, action, chunk, name, level]
 * (action: "lower-function" | "lower-module" | "fold-function"). The editor commands
 * "Lower function to next level", "Lower to..." and "Lower module" pick among those
 * actions rather than rebuilding their arguments, so the server stays the one
 * place that knows what can be lowered. Pure.
 */

export const APPLY_ACTION = 'mlirtext.applyAction';

/** The LSP shape of a code action, as far as we read it. */
export interface CodeActionLike {
  title: string;
  kind?: string;
  command?: { title?: string; command: string; arguments?: unknown[] };
}

export interface Lowering {
  title: string;
  action: 'lower-function' | 'lower-module' | 'fold-function';
  /** The function name (no @), undefined for the module. */
  name?: string;
  /** The level the action lowers to (hlo, tosa, linalg, loops, llvm). */
  level?: string;
  /** True for the one step to the next level. */
  next: boolean;
  command: string;
  arguments: unknown[];
}

const ACTIONS = new Set(['lower-function', 'lower-module', 'fold-function']);

/** The lowering actions among a code-action answer, in the server's order. */
export function lowerings(actions: CodeActionLike[] | null | undefined): Lowering[] {
  const out: Lowering[] = [];
  for (const a of actions ?? []) {
    const cmd = a.command;
    if (!cmd || cmd.command !== APPLY_ACTION || !Array.isArray(cmd.arguments)) {
      continue;
    }
    const [, , action, , name, level] = cmd.arguments;
    if (typeof action !== 'string' || !ACTIONS.has(action)) {
      continue;
    }
    out.push({
      title: a.title,
      action: action as Lowering['action'],
      name: typeof name === 'string' ? name : undefined,
      level: typeof level === 'string' ? level : undefined,
      next: /\(next level\)\s*$/.test(a.title),
      command: cmd.command,
      arguments: cmd.arguments,
    });
  }
  return out;
}

/** The function's step to the next level: the one marked "(next level)", else its first lowering. */
export function nextLevelLowering(all: Lowering[]): Lowering | undefined {
  const fns = all.filter((l) => l.action === 'lower-function');
  return fns.find((l) => l.next) ?? fns[0];
}

export function functionLowerings(all: Lowering[]): Lowering[] {
  return all.filter((l) => l.action === 'lower-function');
}

export function moduleLowerings(all: Lowering[]): Lowering[] {
  return all.filter((l) => l.action === 'lower-module');
}

/** What `mlirtext.applyAction` answers. */
export interface ApplyResult {
  applied?: boolean;
  message?: string;
}

/** Why nothing changed, for the user, or undefined when the edit was applied. */
export function applyFailure(result: ApplyResult | null | undefined): string | undefined {
  if (!result) {
    return 'the server did not answer (see the "mlirtext language server" output)';
  }
  if (result.applied) {
    return undefined;
  }
  return result.message ?? 'the editor did not apply the edit (the document may have changed meanwhile)';
}
