// ELK for the graph view's webview, copied from the elkjs package at build time (`npm run
// compile`, and `vscode:prepublish` before `vsce package`): the view fetches nothing at run time.
const fs = require('fs');
const path = require('path');

const from = path.join(__dirname, '..', 'node_modules', 'elkjs', 'lib');
const to = path.join(__dirname, '..', 'media', 'graph');
fs.mkdirSync(to, { recursive: true });
for (const file of ['elk-api.js', 'elk-worker.min.js', 'elk.bundled.js']) {
  fs.copyFileSync(path.join(from, file), path.join(to, file));
}
