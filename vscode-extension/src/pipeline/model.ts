/** What the server's `mlirtext.pipeline` command answers, and sums over it. Pure. */

export interface PassTime {
  pass: string;
  seconds: number;
}

export interface PipelineLevel {
  level: string;
  text: string;
  /** {dialect: {op name: count}} */
  op_counts: Record<string, Record<string, number>>;
  /** The passes that produced this level from the one before (empty for the first). */
  passes: PassTime[];
  /** Per line of `text`: the document line (0-based) of the source op the op starting there came from. */
  origins?: (number | null)[];
}

export interface PipelineResult {
  function?: string | null;
  levels?: PipelineLevel[];
  /** Set when lowering stopped part way (the levels before it are still there) or failed outright. */
  error?: string | null;
  /** LLVM IR text of the llvm level, when the server's targets package made it. */
  target?: string | null;
  /** The dispatches the function forms (the GPU targets' kernels, one each). */
  dispatches?: DispatchInfo[];
  /** Each target's kernels for the function, in the order asked (llvm-cpu first by default). */
  targets?: TargetCode[];
  /** Every pass of the lowering as a step (the first: the input, before any pass). */
  steps?: PassStep[];
}

/**
 * One line of a step's inline diff: `kind` added, removed, changed, moved, '' (as it was), or
 * skip (a run of unchanged lines left out; its text says how many).
 */
export interface StepLine {
  kind: '' | 'added' | 'removed' | 'changed' | 'moved' | 'skip';
  text: string;
  /** The document line (0-based) of the source op the op on this line came from. */
  origin: number | null;
}

/** A pass of the lowering: the module after it, and what it changed (ops matched by origin). */
export interface PassStep {
  index: number;
  /** null for the first step (the input). */
  pass: string | null;
  level: string | null;
  seconds: number;
  ops_before: number;
  ops_after: number;
  changed: boolean;
  /** The inline diff against the step before (the whole text for the first step); [] when unchanged. */
  lines: StepLine[];
  counts: Partial<Record<'added' | 'removed' | 'changed' | 'moved', number>>;
  /** What it rewrote, in a few words. */
  summary: string;
}

/** What the server's `mlirtext.profile` command answers. */
export interface ProfileResult {
  function?: string;
  device?: string;
  calls?: number;
  /** Mean seconds per profiled call. */
  seconds?: number;
  rows?: ProfileRow[];
  /** The part of a call's time outside the dispatches (inputs, buffers, results). */
  host_share?: number;
  /** Per source line (0-based): its share of the run time, through the dispatches it went into. */
  ops?: OpShare[];
  /** The per-dispatch table as `mlirtext run --profile` prints it. */
  table?: string;
  error?: string;
}

export interface ProfileRow {
  name: string;
  kernel: string;
  calls: number;
  total: number;
  median: number;
  share: number;
  /** Document lines (0-based) of the source ops it was made from. */
  lines: number[];
  ops: string[];
}

export interface OpShare {
  line: number;
  share: number;
  seconds: number;
  dispatches: string[];
}

/** What the server's `mlirtext.targetCode` command answers (the pipeline's target part alone). */
export interface TargetCodeResult {
  function?: string | null;
  dispatches?: DispatchInfo[];
  targets?: TargetCode[];
  error?: string | null;
}

export interface DispatchInfo {
  name: string;
  index: number | null;
  /** The structured ops it runs. */
  ops: string[];
  /** Document lines (0-based) of the source ops it was made from. */
  lines: number[];
}

/** One target (llvm-cpu, cuda, rocm, vulkan-spirv): its kernels, or why it has none. */
export interface TargetCode {
  target: string;
  arch: string;
  /** What the code is: llvm, ptx, asm (AMDGPU) or spirv; `code_name` says it in words. */
  language: string;
  code_name: string;
  error: string | null;
  seconds: number;
  kernels: TargetKernel[];
}

export interface TargetKernel {
  name: string;
  dispatch: number | null;
  entry: string;
  /** GPU: threads and workgroups launched; llvm-cpu: row ranges (workgroups) it splits into. */
  threads: number | null;
  workgroups: number | null;
  workgroup_size: number | null;
  /** Bytes of machine code (llvm-cpu: its symbol in the object; GPU: the kernel's binary). */
  size: number | null;
  implementation: string;
  code: string;
  /** Document lines (0-based) of the source ops it was made from. */
  lines: number[];
}

/** One line about a kernel: entry point, launch and code size. */
export function kernelSummary(kernel: TargetKernel): string {
  const parts = [`entry ${kernel.entry}`];
  if (kernel.threads !== null && kernel.threads !== undefined) {
    const groups = kernel.workgroups === 1 ? 'workgroup' : 'workgroups';
    parts.push(`${kernel.threads} threads (${kernel.workgroups} ${groups} of ${kernel.workgroup_size})`);
  }
  if (kernel.size !== null && kernel.size !== undefined) {
    parts.push(formatBytes(kernel.size));
  }
  return parts.join(' · ');
}

export function formatBytes(n: number): string {
  return n < 10240 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`;
}

export interface DialectCount {
  dialect: string;
  count: number;
}

/** Ops per dialect of one level, largest first; builtin/func last (they are the frame, not the work). */
export function dialectCounts(level: PipelineLevel): DialectCount[] {
  const out = Object.entries(level.op_counts ?? {}).map(([dialect, ops]) => ({
    dialect,
    count: Object.values(ops).reduce((a, b) => a + b, 0),
  }));
  const frame = (d: string) => (d === 'func' || d === 'builtin' ? 1 : 0);
  return out.sort((a, b) => frame(a.dialect) - frame(b.dialect) || b.count - a.count || a.dialect.localeCompare(b.dialect));
}

export function totalOps(level: PipelineLevel): number {
  return dialectCounts(level).reduce((a, d) => a + d.count, 0);
}

export function levelSeconds(level: PipelineLevel): number {
  return (level.passes ?? []).reduce((a, p) => a + (p.seconds || 0), 0);
}

/** Every dialect that appears at some level, in first-appearance order (the chart legend). */
export function allDialects(levels: PipelineLevel[]): string[] {
  const seen: string[] = [];
  for (const level of levels) {
    for (const { dialect } of dialectCounts(level)) {
      if (!seen.includes(dialect)) {
        seen.push(dialect);
      }
    }
  }
  return seen;
}

/** The colour family of a dialect: the level it belongs to, so a bar shows the flow from top to bottom. */
export function dialectFamily(dialect: string): string {
  if (['stablehlo', 'mhlo', 'chlo'].includes(dialect)) return 'hlo';
  if (dialect === 'tosa') return 'tosa';
  if (['linalg', 'tensor', 'bufferization'].includes(dialect)) return 'linalg';
  if (['scf', 'memref', 'affine', 'cf', 'vector'].includes(dialect)) return 'loops';
  if (dialect === 'llvm') return 'llvm';
  if (['arith', 'math', 'index', 'complex'].includes(dialect)) return 'arith';
  if (['func', 'builtin'].includes(dialect)) return 'frame';
  return 'other';
}
