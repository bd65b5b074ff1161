/**
 * Inputs for "Run function" in iree-run-module's syntax (`4x8xf32=0.5`,
 * `2x3xi32=1 2 3 4 5 6`, `@x.npy`) as the user types them in one input box, the
 * template offered for a signature, and the arguments of the server's
 * `mlirtext.run` command. Pure.
 */

/**
 * Split one line of inputs. Values hold spaces (`2xf32=1 2`), so inputs are separated
 * by `;` or given as `--input=...` flags, as on iree-run-module's command line.
 * An empty line means "random inputs" (undefined).
 */
export function parseInputsLine(line: string): string[] | undefined {
  const text = line.trim();
  if (!text) {
    return undefined;
  }
  const parts = text.includes('--input=')
    ? text.split(/(?:^|\s+)--input=/).map((p) => p.trim().replace(/^(['"])(.*)\1$/, '$2'))
    : text.split(';');
  const inputs = parts.map((p) => p.trim()).filter((p) => p.length > 0);
  return inputs.length > 0 ? inputs : undefined;
}

/** A type as iree-run-module spells an input's type: tensor<4x8xf32> -> 4x8xf32, f32 -> f32. */
export function inputTypeSpelling(type: string): string | undefined {
  const t = type.trim();
  const shaped = /^tensor<(.*)>$/.exec(t);
  const inner = shaped ? shaped[1].trim() : t;
  if (/^((\d+x)*)([su]?i\d+|f\d+|bf16|index)$/.test(inner)) {
    return inner;
  }
  return undefined; // dynamic shapes, memrefs, encodings: no template, the user writes it
}

/** `4x8xf32=0; 16xf32=0`: a starting point for the input box, or '' when a type has no simple spelling. */
export function inputTemplate(argTypes: string[]): string {
  const spelled = argTypes.map(inputTypeSpelling);
  if (spelled.some((s) => s === undefined)) {
    return '';
  }
  return spelled.map((s) => `${s}=0`).join('; ');
}

/** Arguments of the server command `mlirtext.run`: [uri, function, inputs or null, seed, device]. */
export function runCommandArguments(uri: string, fn: string, inputs: string[] | undefined, seed = 0, device = 'reference'): unknown[] {
  return [uri, fn, inputs ?? null, seed, device];
}

/** Arguments of the server command `mlirtext.pipeline`: [uri, function or null (the module), chunk or null]. */
/** Also the arguments of `mlirtext.targetCode`; `targets` ([] for none) only when given. */
export function pipelineCommandArguments(uri: string, fn: string | undefined, chunk?: number, targets?: string[] | null): unknown[] {
  const args: unknown[] = [uri, fn ?? null, chunk ?? null];
  return targets === undefined ? args : [...args, targets];
}

/** What `mlirtext.run` answers. */
export interface RunResult {
  function?: string;
  inputs?: string[];
  outputs?: string[];
  text?: string;
  /** The median of `calls` calls after a warm-up (`timing` says so in words). */
  seconds?: number;
  device?: string;
  calls?: number;
  timing?: string;
  /** Set when this run compiled the module for a native device (null: cached, or interpreted). */
  compile_seconds?: number | null;
  error?: string;
}

export function formatSeconds(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) {
    return '?';
  }
  if (seconds < 1e-3) {
    return `${(seconds * 1e6).toFixed(0)} µs`;
  }
  if (seconds < 1) {
    return `${(seconds * 1e3).toFixed(seconds < 0.01 ? 2 : 1)} ms`;
  }
  return `${seconds.toFixed(2)} s`;
}

/** Long values are cut in the log; `limit` characters per value. */
export function clip(text: string, limit = 400): string {
  return text.length <= limit ? text : `${text.slice(0, limit)} … (${text.length - limit} more characters)`;
}

/** The run log's text for one run: what ran, on what, what came out, how long it took. */
export function formatRunResult(result: RunResult, file: string, randomInputs: boolean): string {
  if (result.error) {
    return `@${result.function ?? '?'} in ${file}: error: ${result.error}\n`;
  }
  const on = result.device ? ` on ${result.device}` : '';
  const lines = [`@${result.function} in ${file}${on} (${randomInputs ? 'random inputs, seed 0' : 'given inputs'})`];
  (result.inputs ?? []).forEach((v, i) => lines.push(`  input[${i}]:  ${clip(v)}`));
  (result.outputs ?? []).forEach((v, i) => lines.push(`  result[${i}]: ${clip(v, 2000)}`));
  lines.push(`  time: ${formatSeconds(result.seconds)}${result.timing ? ` (${result.timing})` : ''}`);
  if (result.compile_seconds) {
    lines.push(`  compile: ${formatSeconds(result.compile_seconds)} (once; later runs reuse the module)`);
  }
  return lines.join('\n') + '\n';
}
