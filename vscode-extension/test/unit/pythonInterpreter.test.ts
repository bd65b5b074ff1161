import assert from 'node:assert/strict';
import { test } from 'node:test';
import { interpreterFromPythonApi } from '../../src/pythonInterpreter';

test('no Python extension: no interpreter', async () => {
  assert.equal(await interpreterFromPythonApi(undefined), undefined);
});

test('the older API: execCommand is used as it is', async () => {
  const api = { settings: { getExecutionDetails: () => ({ execCommand: ['/venv/bin/python'] }) } };
  assert.deepEqual(await interpreterFromPythonApi(api), ['/venv/bin/python']);
});

test('the environments API: the resolved executable', async () => {
  let resolvedWith: unknown;
  const api = {
    settings: { getExecutionDetails: () => ({ execCommand: undefined }) },
    environments: {
      getActiveEnvironmentPath: () => ({ path: '/envs/ml' }),
      resolveEnvironment: async (env: unknown) => {
        resolvedWith = env;
        return { executable: { uri: { fsPath: '/envs/ml/bin/python' } } };
      },
    },
  };
  assert.deepEqual(await interpreterFromPythonApi(api), ['/envs/ml/bin/python']);
  assert.deepEqual(resolvedWith, { path: '/envs/ml' });
});

test('an environment that does not resolve falls back to its path', async () => {
  const api = {
    environments: { getActiveEnvironmentPath: () => ({ path: '/usr/bin/python3' }), resolveEnvironment: async () => undefined },
  };
  assert.deepEqual(await interpreterFromPythonApi(api), ['/usr/bin/python3']);
});
