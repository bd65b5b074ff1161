// The pipeline view's behaviour: switch between side-by-side and stepped layouts,
// follow a click on an op to its source op and what that became in every level (the
// server gives each line the source line its op came from; without one, named
// results, which keep their names through lowering) and to the source line in the
// editor, show the kernels of the target picked in the target column, and put in the
// device runs when the extension sends them. The HTML itself is rendered by the extension.
(function () {
  const vscode = acquireVsCodeApi();
  const levels = document.getElementById('levels');
  const modeButtons = document.querySelectorAll('.mode button');
  const stepButtons = document.querySelectorAll('.steps button');
  const columns = document.querySelectorAll('.level');
  const state = vscode.getState() || { mode: 'side', col: 0 };

  function show(mode, col) {
    state.mode = mode;
    state.col = Math.max(0, Math.min(col, columns.length - 1));
    vscode.setState(state);
    levels.classList.toggle('side', mode === 'side');
    levels.classList.toggle('step', mode === 'step');
    modeButtons.forEach((b) => b.classList.toggle('on', b.dataset.mode === mode));
    stepButtons.forEach((b) => b.classList.toggle('on', mode === 'step' && Number(b.dataset.col) === state.col));
    columns.forEach((c) => c.classList.toggle('current', Number(c.dataset.col) === state.col));
    if (mode === 'side' && columns[state.col]) {
      columns[state.col].scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
  }

  modeButtons.forEach((b) => b.addEventListener('click', () => show(b.dataset.mode, state.col)));
  stepButtons.forEach((b) => b.addEventListener('click', () => show(state.mode === 'side' ? 'side' : 'step', Number(b.dataset.col))));
  document.addEventListener('keydown', (e) => {
    if (state.mode !== 'step') return;
    if (e.key === 'ArrowRight') show('step', state.col + 1);
    if (e.key === 'ArrowLeft') show('step', state.col - 1);
  });

  levels.addEventListener('click', (e) => {
    const line = e.target.closest('.ln.op');
    if (!line) return;
    document.querySelectorAll('.ln.hl, .ln.picked').forEach((l) => l.classList.remove('hl', 'picked'));
    line.classList.add('picked');
    const defs = (line.dataset.defs || '').split(' ').filter(Boolean);
    const origin = line.dataset.origin;
    const matches = [];
    document.querySelectorAll('.ln.op').forEach((other) => {
      if (other === line) return;
      const same = origin !== undefined
        ? other.dataset.origin === origin
        : defs.some((d) => (other.dataset.defs || '').split(' ').includes(d));
      if (same) {
        other.classList.add('hl');
        matches.push(other);
      }
    });
    // Bring the first match of each column into view, inside that column only.
    const seen = new Set();
    matches.forEach((m) => {
      const col = m.closest('.level');
      if (seen.has(col)) return;
      seen.add(col);
      const pre = m.closest('pre.code');
      if (pre) {
        pre.scrollTop = Math.max(0, m.offsetTop - pre.offsetTop - pre.clientHeight / 3);
      } else {
        m.scrollIntoView({ block: 'nearest', inline: 'nearest' }); // a kernel's header in the target column
      }
    });
    const column = line.closest('.level');
    vscode.postMessage({
      type: 'reveal',
      level: column.dataset.level,
      source: column.dataset.source === '1',
      line: Number(line.dataset.line),
      defs,
      origin: origin === undefined ? undefined : Number(origin),
      op: line.dataset.op,
      text: line.textContent,
    });
  });

  // The target column's select (its content may come after the levels, in a message).
  function showTarget(target) {
    const select = document.getElementById('target-select');
    const sections = document.querySelectorAll('.target-code');
    if (!select || ![...sections].some((s) => s.dataset.target === target)) return;
    select.value = target;
    sections.forEach((s) => (s.hidden = s.dataset.target !== target));
    state.target = target;
    vscode.setState(state);
  }
  document.addEventListener('change', (e) => {
    if (e.target && e.target.id === 'target-select') showTarget(e.target.value);
  });
  if (state.target) showTarget(state.target);

  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === 'targets') {
      const column = document.querySelector('article[data-level="targets"]');
      if (column) column.innerHTML = e.data.html;
      if (state.target) showTarget(state.target);
    }
    if (e.data && e.data.type === 'devices') {
      document.getElementById('device-runs').querySelector('.body').innerHTML = e.data.html;
    }
  });

  show(state.mode, state.col);
  vscode.postMessage({ type: 'ready' });
})();
