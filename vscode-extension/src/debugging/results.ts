/**
 * What the server's `mlirtext.bisect` and `mlirtext.reduce` answer, their arguments, and the
 * inputs of each function's last run (a bisect of a function replays them). Pure: no vscode
 * import, unit tested with `node --test`.
 */

/** A source op to blame: [line, UTF-16 character] at both ends, as the server counts. */
export interface Marker {
  start: [number, number];
  end: [number, number];
  op: string;
  message: string;
}

/** The first dispatch a device computes differently from the reference (a bisect across devices). */
export interface DispatchFound {
  device: string;
  index: number;
  /** The dispatches of the call. */
  total: number;
  /** `FUNCTION#INDEX`, as the profile names the dispatch. */
  name: string;
  kernel: string;
  summary: string;
  difference: { max_abs: number; max_rel: number; max_ulp: number };
  /** Its kernel's source ops, each with its document line (0-based). */
  ops: { op: string; line: number }[];
  /** Its source ops' markers (among the answer's `markers` too). */
  markers: Marker[];
}

export interface BisectResult {
  function?: string;
  /** 'diverged', 'crashed', 'does not verify', 'failed'; null when no pass is to blame. */
  kind?: string | null;
  pass?: string;
  position?: number;
  total?: number;
  /** The level the guilty pass's step lowers to. */
  level?: string | null;
  message?: string;
  /** How far the results moved, when they diverged. */
  difference?: { max_abs: number; max_rel: number; max_ulp: number } | null;
  summary?: string;
  markers?: Marker[];
  /** The repro directory: before.mlir, the inputs and results as .npy, README with the command. */
  repro?: string;
  command?: string;
  crashed?: boolean;
  /** With devices: the first dispatch that differs (absent when all agree). */
  dispatch?: DispatchFound;
  error?: string;
}

export interface ReduceResult {
  function?: string;
  text?: string;
  path?: string;
  summary?: string;
  error?: string;
}

/** [uri, function, inputs or null (seeded random), seed, faults (--debug-* flags), devices (checked against the reference dispatch by dispatch)]. */
export function bisectArguments(uri: string, fn: string, inputs: string[] | undefined, faults: string[], devices: string[] = []): unknown[] {
  return [uri, fn, inputs ?? null, 0, faults, devices];
}

/** The `mlirtext.debug.devices` setting's device names (anything else in it is dropped). */
export function deviceNames(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.length > 0) : [];
}

/** [uri, function, faults or null (those of the bisect that found the crash)]. */
export function reduceArguments(uri: string, fn: string, faults: string[] | undefined): unknown[] {
  return [uri, fn, faults && faults.length > 0 ? faults : null];
}

/** The `mlirtext.debug.faults` setting's strings (anything else in it is dropped). */
export function faultFlags(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.startsWith('--debug-')) : [];
}

/** The message under the markers and in the notification. */
export function describeFinding(result: BisectResult): string {
  if (result.error) {
    return `error: ${result.error}`;
  }
  return result.summary ?? 'no answer';
}

/** The inputs of each function's last run, per document: what "Find where @f's numbers diverge" uses. */
export class LastInputs {
  private readonly inputs = new Map<string, string[] | undefined>();

  remember(uri: string, fn: string, inputs: string[] | undefined): void {
    this.inputs.set(`${uri}#${fn}`, inputs);
  }

  of(uri: string, fn: string): string[] | undefined {
    return this.inputs.get(`${uri}#${fn}`);
  }
}

/** One per extension host: the run command fills it, the bisect reads it. */
export const lastInputs = new LastInputs();
