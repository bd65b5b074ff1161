import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEVICES, configuredDevice, deviceChoices, deviceListProblem, formatDiff, runDevicesCommandArguments, speedup } from '../../src/devices';

test('the setting names a device, anything else is the reference', () => {
  assert.equal(configuredDevice('local-task'), 'local-task');
  assert.equal(configuredDevice('gpu'), 'reference');
  assert.equal(configuredDevice(undefined), 'reference');
});

test('the quick pick offers every device, the default first and marked', () => {
  const choices = deviceChoices('local-sync');
  assert.deepEqual(choices.map((c) => c.label), ['local-sync', 'reference', 'local-task']);
  assert.match(choices[0].description, /default/);
  assert.equal(choices[1].description, '');
  assert.equal(deviceChoices('reference').length, DEVICES.length);
});

test('runDevices arguments, speed-ups and differences', () => {
  assert.deepEqual(runDevicesCommandArguments('file:///a.mlir', 'f', undefined), ['file:///a.mlir', 'f', null, 0]);
  const reference = { device: 'reference', seconds: 0.004 };
  assert.equal(speedup({ device: 'local-task', seconds: 0.0002 }, reference), '20×');
  assert.equal(speedup({ device: 'local-sync', seconds: 0.001 }, reference), '4.0×');
  assert.equal(speedup(reference, reference), '');
  assert.equal(speedup({ device: 'local-sync' }, reference), '');
  assert.equal(formatDiff(0), '0');
  assert.equal(formatDiff(3), '3');
  assert.equal(formatDiff(7.152557373046875e-7), '7.2e-7');
  assert.equal(formatDiff(null), '?');
});

test("the cluster's devices follow the local ones, as the server lists them; its error is one line", () => {
  const listed = {
    cluster: '10.0.0.5:6379',
    error: null,
    devices: [
      { id: 'reference', label: 'reference', detail: 'the interpreter', where: 'local' as const },
      { id: 'cluster:cuda', label: 'cuda on any of 2 nodes', detail: 'on the Ray cluster', where: 'cluster' as const },
    ],
  };
  const choices = deviceChoices('local-task', listed);
  assert.deepEqual(choices.map((c) => c.id), ['local-task', 'reference', 'local-sync', 'cluster:cuda']);
  assert.equal(choices[3].label, 'cuda on any of 2 nodes');
  assert.equal(choices[3].description, 'Ray cluster 10.0.0.5:6379');
  assert.deepEqual(deviceChoices('local-task', null), deviceChoices('local-task'));
  assert.equal(deviceListProblem(listed), undefined);
  assert.equal(deviceListProblem(null), undefined);
  assert.equal(
    deviceListProblem({ devices: [], cluster: '10.0.0.9:1', error: 'cannot reach the Ray cluster at 10.0.0.9:1: Connection refused' }),
    'mlirtext.cluster: cannot reach the Ray cluster at 10.0.0.9:1: Connection refused',
  );
});

test('two nodes with the same device kind are two entries, each passing its node to the run', () => {
  const node = (id: string, hostname: string) => ({
    id: `cluster:cuda@${id}`, label: `cuda on ${hostname}`, detail: `node ${id.slice(0, 12)} only`,
    where: 'cluster' as const, node: { node_id: id, hostname },
  });
  const a = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8';
  const b = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa998877665544';
  const listed = {
    cluster: 'head:6379',
    devices: [
      { id: 'cluster:cuda', label: 'cuda on any of 2 nodes', detail: 'whichever node', where: 'cluster' as const },
      node(a, 'gpu1'),
      node(b, 'gpu2'),
    ],
  };
  const remote = deviceChoices('reference', listed).slice(DEVICES.length);
  assert.deepEqual(remote.map((c) => [c.id, c.label, c.description]), [
    ['cluster:cuda', 'cuda on any of 2 nodes', 'Ray cluster head:6379'],
    [`cluster:cuda@${a}`, 'cuda on gpu1', 'Ray cluster head:6379, node a1b2c3d4e5f6'],
    [`cluster:cuda@${b}`, 'cuda on gpu2', 'Ray cluster head:6379, node ffeeddccbbaa'],
  ]);
});
