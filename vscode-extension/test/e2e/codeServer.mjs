// code-server's lifecycle for the tests: install the .vsix, start it on a free port,
// wait for /healthz, and on the way out end every process it started (the extension
// host and file watcher run in process groups of their own, so killing the group of
// code-server is not enough).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export function installExtension(cs, dirs, vsix) {
  execFileSync(cs, ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--install-extension', vsix, '--force'], {
    env: dirs.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export async function startCodeServer(cs, dirs, workspace, port, logStream) {
  const child = spawn(
    cs,
    [
      '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override',
      '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, workspace,
    ],
    { env: dirs.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.pipe(logStream);
  child.stderr.pipe(logStream);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${child.exitCode} (see its log)`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) {
        return child;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('code-server did not answer /healthz within 60 s');
}

/** Every descendant of `pid` (children first found through /proc's parent links). */
function descendants(pid) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const [child, parent] of parents) {
      if (parent === p && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

export async function stopCodeServer(child) {
  if (!child || child.exitCode !== null) return;
  const pids = [child.pid, ...descendants(child.pid)];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 5000;
  const alive = () => pids.filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } });
  while (alive().length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const pid of alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
