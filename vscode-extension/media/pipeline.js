// The pipeline view's behaviour: switch between side-by-side and stepped layouts,
// follow a click on an op to its source op and what that became in every level (the
// server gives each line the source line its op came from; without one, named
// results, which keep their names through lowering) and to the source line in the
// editor, show the kernels of the target picked in the target column, step through the
// passes (pass explorer), and put in the device runs and the profile when the extension
// sends them. The HTML itself is rendered by the extension.
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
    if (e.target && e.target.id === 'px-search') return;
    if (explorer && e.target && e.target.closest && e.target.closest('#pass-explorer')) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowRight') passStep(1);
      if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') passStep(-1);
      return;
    }
    if (state.mode !== 'step') return;
    if (e.key === 'ArrowRight') show('step', state.col + 1);
    if (e.key === 'ArrowLeft') show('step', state.col - 1);
  });

  // The pass explorer: one pass's diff at a time, picked in the list or by prev / next among
  // the passes listed (the unchanged ones hidden unless the toggle is off); a search marks the
  // lines that hold the text in every step and the steps that have some.
  const explorer = document.getElementById('pass-explorer');
  const items = explorer ? [...explorer.querySelectorAll('.px-item')] : [];
  const panes = explorer ? [...explorer.querySelectorAll('.px-step')] : [];
  const hideBox = document.getElementById('px-hide-unchanged');
  const search = document.getElementById('px-search');

  function listed() {
    return items.filter((i) => !i.hidden);
  }

  function showPass(index) {
    if (!explorer) return;
    state.pass = index;
    vscode.setState(state);
    explorer.dataset.current = String(index);
    items.forEach((i) => i.classList.toggle('on', Number(i.dataset.step) === index));
    panes.forEach((p) => (p.hidden = Number(p.dataset.step) !== index));
    const on = items.find((i) => Number(i.dataset.step) === index);
    if (on) on.scrollIntoView({ block: 'nearest' });
    const shown = listed();
    const at = shown.findIndex((i) => Number(i.dataset.step) === index);
    document.getElementById('px-prev').disabled = at <= 0;
    document.getElementById('px-next').disabled = at < 0 || at >= shown.length - 1;
  }

  function passStep(direction) {
    const shown = listed();
    const at = shown.findIndex((i) => Number(i.dataset.step) === state.pass);
    const next = shown[Math.max(0, Math.min(shown.length - 1, at + direction))];
    if (next) showPass(Number(next.dataset.step));
  }

  function hideUnchanged(hide) {
    state.hideUnchanged = hide;
    hideBox.checked = hide;
    items.forEach((i) => (i.hidden = hide && i.classList.contains('unchanged') && !i.classList.contains('guilty')));
    const current = items.find((i) => Number(i.dataset.step) === state.pass);
    if (current && current.hidden) {
      // the pass shown is now hidden: show the nearest listed one before it (the IR it shows)
      const before = listed().filter((i) => Number(i.dataset.step) < state.pass);
      showPass(Number((before[before.length - 1] || listed()[0]).dataset.step));
    } else {
      showPass(state.pass);
    }
  }

  function find(text) {
    const needle = text.trim().toLowerCase();
    let lines = 0;
    const steps = new Set();
    panes.forEach((p) => {
      p.querySelectorAll('.ln:not(.d-skip)').forEach((l) => {
        const hit = needle !== '' && l.textContent.toLowerCase().includes(needle);
        l.classList.toggle('found', hit);
        if (hit) {
          lines++;
          steps.add(p.dataset.step);
        }
      });
    });
    items.forEach((i) => i.classList.toggle('hit', steps.has(i.dataset.step)));
    document.getElementById('px-found').textContent = needle ? `${lines} line${lines === 1 ? '' : 's'} in ${steps.size} step${steps.size === 1 ? '' : 's'}` : '';
    if (needle && steps.size && !steps.has(String(state.pass))) {
      const first = listed().find((i) => steps.has(i.dataset.step)) || items.find((i) => steps.has(i.dataset.step));
      if (first) {
        first.hidden = false;
        showPass(Number(first.dataset.step));
      }
    }
    const shownHit = panes.find((p) => !p.hidden) && panes.find((p) => !p.hidden).querySelector('.ln.found');
    if (shownHit) {
      const pre = shownHit.closest('pre.code');
      pre.scrollTop = Math.max(0, shownHit.offsetTop - pre.offsetTop - pre.clientHeight / 3);
    }
  }

  if (explorer) {
    items.forEach((i) => i.addEventListener('click', () => showPass(Number(i.dataset.step))));
    document.getElementById('px-prev').addEventListener('click', () => passStep(-1));
    document.getElementById('px-next').addEventListener('click', () => passStep(1));
    hideBox.addEventListener('change', () => hideUnchanged(hideBox.checked));
    search.addEventListener('input', () => find(search.value));
    state.pass = state.pass !== undefined && items.some((i) => Number(i.dataset.step) === state.pass)
      ? state.pass : Number(explorer.dataset.current);
    hideUnchanged(state.hideUnchanged !== undefined ? state.hideUnchanged : true);
  }

  // Bring the first of `matches` in each column into view, inside that column only.
  function bringIntoView(matches) {
    const seen = new Set();
    matches.forEach((m) => {
      const col = m.closest('.level, .px-step');
      if (seen.has(col)) return;
      seen.add(col);
      const pre = m.closest('pre.code');
      if (pre) {
        pre.scrollTop = Math.max(0, m.offsetTop - pre.offsetTop - pre.clientHeight / 3);
      } else {
        m.scrollIntoView({ block: 'nearest', inline: 'nearest' }); // a kernel's header in the target column
      }
    });
  }

  // The op of a source line (hover's link to the view) marked at every level: what it became.
  let marked;   // that line, until an op is clicked
  function markOrigin(origin) {
    document.querySelectorAll('.ln.hl, .ln.picked').forEach((l) => l.classList.remove('hl', 'picked'));
    const matches = [...document.querySelectorAll(`.ln.op[data-origin="${origin}"]`)];
    matches.forEach((m) => m.classList.add('hl'));
    bringIntoView(matches);
  }

  // An op clicked in a level, in a pass's diff, a dispatch in the profile table or a source op of the
  // dispatch a device got wrong.
  document.addEventListener('click', (e) => {
    const row = e.target.closest && e.target.closest('tr.dispatch[data-origin], #dispatch-divergence [data-origin]');
    if (row) {
      vscode.postMessage({ type: 'reveal', source: false, defs: [], origin: Number(row.dataset.origin) });
      return;
    }
    const line = e.target.closest && e.target.closest('.ln.op');
    if (!line || !line.closest('#levels, #pass-explorer')) return;
    document.querySelectorAll('.ln.hl, .ln.picked').forEach((l) => l.classList.remove('hl', 'picked'));
    marked = undefined;
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
    bringIntoView(matches);
    const column = line.closest('.level');
    vscode.postMessage({
      type: 'reveal',
      level: column ? column.dataset.level : 'pass',
      source: column ? column.dataset.source === '1' : false,
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
      if (marked !== undefined) markOrigin(marked);   // its kernel's header too
    }
    if (e.data && e.data.type === 'mark' && Number.isInteger(e.data.origin)) {
      marked = e.data.origin;
      markOrigin(marked);
    }
    if (e.data && e.data.type === 'devices') {
      document.getElementById('device-runs').querySelector('.body').innerHTML = e.data.html;
    }
    if (e.data && e.data.type === 'profile') {
      document.getElementById('profile').querySelector('.body').innerHTML = e.data.html;
    }
  });

  show(state.mode, state.col);
  vscode.postMessage({ type: 'ready' });
})();
