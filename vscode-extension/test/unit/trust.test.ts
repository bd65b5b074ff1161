import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveServerCommand } from '../../src/serverCommand';
import { RESTRICTED_SETTINGS, allowedServerSettings, allowedValue, mayUseWorkspaceInterpreter } from '../../src/trust';

const PACKAGE = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const SETTINGS: Record<string, { scope?: string; description?: string; type?: string }> =
  PACKAGE.contributes.configuration.properties;

test('an untrusted workspace cannot choose the server program: its values are ignored', () => {
  const path = { defaultValue: '', globalValue: '/usr/bin/python3', workspaceValue: './evil.sh' };
  const args = { defaultValue: [], workspaceFolderValue: ['-c', 'import os; os.system("x")'] };
  const resolved = { path: './evil.sh', args: ['-c', 'import os; os.system("x")'] };
  const allowed = allowedServerSettings(false, resolved, path, args);
  assert.deepEqual(allowed, { path: '/usr/bin/python3', args: [] });
  const cmd = resolveServerCommand(allowed, undefined);
  assert.equal(cmd.command, '/usr/bin/python3');
  assert.deepEqual(cmd.args, ['-m', 'mlirtext', 'lsp']);
});

test('a trusted workspace keeps what VS Code resolved', () => {
  const resolved = { path: '/repo/.venv/bin/python', args: [] };
  assert.deepEqual(allowedServerSettings(true, resolved, { workspaceValue: resolved.path }, undefined), resolved);
  assert.equal(allowedValue(true, 'resolved', { globalValue: 'user' }), 'resolved');
});

test('untrusted with no user value: the default, never the workspace value', () => {
  assert.equal(allowedValue(false, './evil', { defaultValue: '', workspaceValue: './evil' }), '');
});

test("the Python extension's interpreter (a workspace's .venv) only in a trusted workspace", () => {
  assert.equal(mayUseWorkspaceInterpreter(true), true);
  assert.equal(mayUseWorkspaceInterpreter(false), false);
});

test('package.json: limited support in untrusted workspaces, restricting every setting that names a program, path or arguments', () => {
  const untrusted = PACKAGE.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  assert.ok(untrusted.description);
  assert.deepEqual([...untrusted.restrictedConfigurations].sort(), [...RESTRICTED_SETTINGS].sort());
  const naming = Object.entries(SETTINGS)
    .filter(([key, s]) => /(path|args|command|program|interpreter)$/i.test(key) ||
      /\b(interpreter|executable|arguments)\b/i.test(s.description ?? ''))
    .map(([key]) => key);
  assert.ok(naming.includes('mlirtext.server.path') && naming.includes('mlirtext.server.args'));
  for (const key of naming) {
    assert.ok(untrusted.restrictedConfigurations.includes(key), `${key} is not restricted`);
    assert.ok(['machine', 'machine-overridable'].includes(SETTINGS[key].scope ?? ''), `${key} has scope ${SETTINGS[key].scope}`);
  }
});
