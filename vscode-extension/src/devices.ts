/**
 * The devices a function runs on, as the server's `mlirtext.run` and
 * `mlirtext.runDevices` name them, the choices "Run function" offers (the local
 * devices, then those of the `mlirtext.cluster` Ray cluster that the server's
 * `mlirtext.devices` lists), and what `mlirtext.runDevices` answers. Pure.
 */

export const DEVICES = ['reference', 'local-sync', 'local-task'] as const;
export type Device = (typeof DEVICES)[number];

export const DEVICE_DETAILS: Record<Device, string> = {
  reference: 'the interpreter, on the function as written (any level)',
  'local-sync': 'compiled for llvm-cpu; native kernels one after another',
  'local-task': 'compiled for llvm-cpu; native kernels on a thread pool',
};

/** The `mlirtext.run.device` setting as a device; anything else is the reference. */
export function configuredDevice(value: unknown): Device {
  return (DEVICES as readonly unknown[]).includes(value) ? (value as Device) : 'reference';
}

/** The server command that lists the devices `mlirtext.run` takes. */
export const DEVICES_SERVER_COMMAND = 'mlirtext.devices';

/**
 * One device of `mlirtext.devices`'s answer: `id` is what `mlirtext.run` takes (`cluster:cuda`: any
 * node that offers it; `cluster:cuda@NODE_ID`: that node, which `node` names).
 */
export interface ListedDevice {
  id: string;
  label: string;
  detail: string;
  where: 'local' | 'cluster';
  node?: { node_id: string; hostname: string };
}

/** `mlirtext.devices`'s answer; `error`: the cluster could not be reached (one line). */
export interface DeviceList {
  devices?: ListedDevice[];
  cluster?: string | null;
  error?: string | null;
}

export interface DeviceChoice {
  label: string;
  description: string;
  detail: string;
  /** The device as `mlirtext.run` takes it. */
  id: string;
}

/**
 * The quick pick's items: the default device first (Enter takes it), then the other local ones
 * in order, then the cluster's devices that `listed` (the server's answer, if any) has.
 */
export function deviceChoices(defaultDevice: Device, listed?: DeviceList | null): DeviceChoice[] {
  const ordered = [defaultDevice, ...DEVICES.filter((d) => d !== defaultDevice)];
  const local: DeviceChoice[] = ordered.map((d) => ({
    id: d,
    label: d,
    description: d === defaultDevice ? 'default (mlirtext.run.device)' : '',
    detail: DEVICE_DETAILS[d],
  }));
  const cluster = `Ray cluster ${listed?.cluster ?? ''}`.trim();
  const remote = (listed?.devices ?? [])
    .filter((d) => d.where === 'cluster' && typeof d.id === 'string')
    .map((d) => ({
      id: d.id,
      label: d.label,
      // A pinned entry (one per node) says which node; the unpinned one lets Ray choose.
      description: d.node?.node_id ? `${cluster}, node ${d.node.node_id.slice(0, 12)}` : cluster,
      detail: d.detail,
    }));
  return [...local, ...remote];
}

/** What to tell the user about the device list: the cluster's one-line error, if it has one. */
export function deviceListProblem(listed: DeviceList | null | undefined): string | undefined {
  return listed?.error ? `mlirtext.cluster: ${listed.error}` : undefined;
}

/** Arguments of the server command `mlirtext.runDevices`: [uri, function, inputs or null, seed]. */
export function runDevicesCommandArguments(uri: string, fn: string, inputs: string[] | undefined, seed = 0): unknown[] {
  return [uri, fn, inputs ?? null, seed];
}

/** One device's run in `mlirtext.runDevices`'s answer. */
export interface DeviceRun {
  device: string;
  outputs?: string[];
  /** The median of `calls` calls after a warm-up (`timing` says so in words). */
  seconds?: number;
  calls?: number;
  timing?: string;
  /** Set when this run compiled the module (null: cached, or the interpreter). */
  compile_seconds?: number | null;
  /** Against the reference's outputs (null for the reference itself). */
  match?: boolean | null;
  max_diff?: number | null;
  error?: string | null;
}

export interface DeviceRunsResult {
  function?: string;
  inputs?: string[];
  runs?: DeviceRun[];
  error?: string | null;
}

/** How many times faster than the reference `run` is ("" when either has no time). */
export function speedup(run: DeviceRun, reference: DeviceRun | undefined): string {
  if (!reference?.seconds || !run.seconds || run === reference) {
    return '';
  }
  const x = reference.seconds / run.seconds;
  return `${x >= 10 ? x.toFixed(0) : x.toFixed(1)}×`;
}

/** A largest difference as a short number: 0, 7.2e-7, 3. */
export function formatDiff(diff: number | null | undefined): string {
  if (diff === null || diff === undefined || !Number.isFinite(diff)) {
    return diff === Infinity ? '∞' : '?';
  }
  if (diff === 0 || (Number.isInteger(diff) && Math.abs(diff) < 1e6)) {
    return String(diff);
  }
  return diff.toExponential(1);
}
