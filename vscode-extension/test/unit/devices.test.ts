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
      { id: 'cluster:cuda', label: 'cuda on node gpu1 (0123456789ab)', detail: 'on the Ray cluster', where: 'cluster' as const },
    ],
  };
  const choices = deviceChoices('local-task', listed);
  assert.deepEqual(choices.map((c) => c.id), ['local-task', 'reference', 'local-sync', 'cluster:cuda']);
  assert.equal(choices[3].label, 'cuda on node gpu1 (0123456789ab)');
  assert.equal(choices[3].description, 'Ray cluster 10.0.0.5:6379');
  assert.deepEqual(deviceChoices('local-task', null), deviceChoices('local-task'));
  assert.equal(deviceListProblem(listed), undefined);
  assert.equal(deviceListProblem(null), undefined);
  assert.equal(
    deviceListProblem({ devices: [], cluster: '10.0.0.9:1', error: 'cannot reach the Ray cluster at 10.0.0.9:1: Connection refused' }),
    'mlirtext.cluster: cannot reach the Ray cluster at 10.0.0.9:1: Connection refused',
  );
});
