import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  installCommand,
  isPythonInterpreter,
  notImportableMessage,
  probeCommand,
  resolveServerCommand,
  shellQuote,
  startFailedMessage,
} from '../../src/serverCommand';

test('the path setting wins: an interpreter runs -m mlirtext lsp', () => {
  const cmd = resolveServerCommand({ path: '/opt/venv/bin/python3.11', args: [] }, ['/usr/bin/python3']);
  assert.deepEqual(cmd, {
    command: '/opt/venv/bin/python3.11',
    args: ['-m', 'mlirtext', 'lsp'],
    source: 'setting',
    python: ['/opt/venv/bin/python3.11'],
  });
});

test('the path setting naming the console script runs `lsp` and is not probed as Python', () => {
  const cmd = resolveServerCommand({ path: '/opt/venv/bin/mlirtext', args: [] });
  assert.equal(cmd.command, '/opt/venv/bin/mlirtext');
  assert.deepEqual(cmd.args, ['lsp']);
  assert.equal(cmd.python, undefined);
  assert.equal(probeCommand(cmd), undefined);
});

test('the args setting replaces the default arguments', () => {
  const cmd = resolveServerCommand({ path: 'python', args: ['-X', 'dev', '-m', 'mlirtext_server'] });
  assert.deepEqual(cmd.args, ['-X', 'dev', '-m', 'mlirtext_server']);
});

test("without a setting, the Python extension's interpreter (several words kept) comes next", () => {
  const cmd = resolveServerCommand({ path: '  ', args: [] }, ['conda', 'run', '-n', 'ml', 'python']);
  assert.equal(cmd.command, 'conda');
  assert.deepEqual(cmd.args, ['run', '-n', 'ml', 'python', '-m', 'mlirtext', 'lsp']);
  assert.equal(cmd.source, 'python-extension');
  assert.deepEqual(probeCommand(cmd), { command: 'conda', args: ['run', '-n', 'ml', 'python', '-c', 'import mlirtext, pygls'] });
});

test('with neither, python3 from PATH', () => {
  for (const exec of [undefined, [], ['']]) {
    const cmd = resolveServerCommand({ path: '', args: [] }, exec);
    assert.equal(cmd.command, 'python3');
    assert.equal(cmd.source, 'path');
    assert.deepEqual(cmd.args, ['-m', 'mlirtext', 'lsp']);
  }
});

test('interpreter names are told from other programs', () => {
  for (const p of ['python', 'python3', '/usr/bin/python3.12', 'C:\\Py\\python.exe', 'pythonw.exe']) {
    assert.equal(isPythonInterpreter(p), true, p);
  }
  for (const p of ['mlirtext', '/usr/bin/pypy3', 'python-config', '/home/python/bin/mlirtext']) {
    assert.equal(isPythonInterpreter(p), false, p);
  }
});

test('the not-importable message names the interpreter, the missing module and the install command', () => {
  const cmd = resolveServerCommand({ path: '/my env/bin/python', args: [] });
  const stderr = 'Traceback (most recent call last):\n  File "<string>", line 1\nModuleNotFoundError: No module named \'mlirtext\'\n';
  const message = notImportableMessage(cmd, stderr);
  assert.match(message, /'\/my env\/bin\/python'/);
  assert.match(message, /module 'mlirtext' is not installed/);
  assert.match(message, /mlirtext\.server\.path setting/);
  assert.ok(message.includes("'/my env/bin/python' -m pip install mlirtext"), message);
  assert.equal(installCommand(cmd), "'/my env/bin/python' -m pip install mlirtext");
});

test('an import failing for another reason quotes the last line of the error', () => {
  const cmd = resolveServerCommand({ path: '', args: [] });
  const message = notImportableMessage(cmd, 'Traceback ...\nImportError: numpy.core.multiarray failed to import\n');
  assert.match(message, /ImportError: numpy.core.multiarray failed to import/);
  assert.match(message, /from PATH/);
});

test('shellQuote leaves plain words alone and quotes the rest', () => {
  assert.equal(shellQuote(['python3', '-m', 'pip', 'install', 'a==1.0']), 'python3 -m pip install a==1.0');
  assert.equal(shellQuote(["it's", 'a b']), `'it'\\''s' 'a b'`);
});

test('a server that stops during start-up is named with its arguments, and the log is pointed to', () => {
  const cmd = resolveServerCommand({ path: '/v/bin/python', args: [] });
  const message = startFailedMessage(cmd, 'connection got disposed');
  assert.match(message, /'\/v\/bin\/python -m mlirtext lsp' stopped during start-up \(connection got disposed\)/);
  assert.match(message, /"mlirtext language server" output/);
});
