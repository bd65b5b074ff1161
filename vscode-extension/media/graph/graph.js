// The graph view's script: draws the server's graph (one level, or two side by side) with ELK,
// section by section, the one nearest the viewport first (a section in sight gets a draft layout
// at once, which ELK's replaces: ELK's worker takes most of a second to start); zoom (wheel, +
// and -) and pan (drag); a click on a node selects its op in the editor, the editor's cursor
// selects the node. The model (sections, ELK input, draft layout, SVG) is out/src/graph/model.js,
// written into the page before this, and the bisect's marks and the origin lines' paths
// out/src/graph/marks.js.
(function () {
  // Where the page's open time goes: marks on this page's clock (ms after its navigation
  // started), given to the extension on the command's clock once it says when the command came.
  const times = window.pageMarks || {};
  const markTime = (name) => {
    if (times[name] === undefined) times[name] = performance.now();
  };
  markTime('script');
  const M = window.exports;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const vscode = acquireVsCodeApi();
  const boot = JSON.parse(document.getElementById('boot').textContent);
  const GAP = 36;
  const $ = (id) => document.getElementById(id);

  let data = null;           // the server's answer
  let overlay = 'dialect';
  let byDispatch = false;
  let openedAt = 0;          // when the graph message came (the open time's start)
  let drawnSent = true;      // whether the extension knows the latest graph's first nodes are drawn
  let laidOutSent = true;    // ... and that ELK has laid out a section of it
  let divergence = null;     // the last bisect's marks for this function (marks.ts GraphDivergence)
  let origin = null;         // the origin lines shown: { from: pane, id: item, to: pane, ids: items }
  const dispatchInfo = new Map();

  // ELK in a worker (a blob of the bundled worker: a webview cannot start one from its
  // resource URL), else in this thread. The page loads only ELK's API (the whole of ELK is
  // 1.6 MB to parse before the page could take the server's answer): the whole is loaded here
  // only where no worker starts.
  const elkReady = (async () => {
    try {
      const code = await (await fetch(boot.elkWorker)).text();
      markTime('elk fetched');
      const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
      const elk = new ELK({ workerFactory: () => new Worker(url) });
      await elk.layout({ id: 'probe', children: [{ id: 'a', width: 1, height: 1 }], edges: [] });
      markTime('elk ready');
      return elk;
    } catch (e) {
      await new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.nonce = document.getElementById('boot').nonce;
        script.src = boot.elkBundled;
        script.onload = resolve;
        script.onerror = () => reject(new Error('ELK did not load'));
        document.head.appendChild(script);
      });
      return new ELK();
    }
  })();

  class Pane {
    constructor(index) {
      this.index = index;
      this.el = document.querySelector(`.pane[data-pane="${index}"]`);
      this.svg = this.el.querySelector('svg');
      this.world = this.svg.querySelector('.world');
      this.graph = null;
      this.view = { x: -20, y: -20, k: 1 };
      this.selected = [];
      this.linked = [];
      this.centerOn = null;  // an item to center on once its section is laid out
      this.guilty = new Set();  // the items of the ops the last bisect blames
      this.svg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
      // The pane's size changes with the legend and the toolbar's wrapping, not only the window's.
      // Fitted and not zoomed or panned since: it stays fitted (a maximized editor, a pane beside).
      new ResizeObserver(() => {
        if (!this.graph) return;
        if (this.fitted && !this.moved && this.layouts[0]) this.fit();
        else this.applyView();
      }).observe(this.svg);
      this.listen();
    }

    setGraph(graph, keepView) {
      this.graph = graph;
      this.state = this.state && keepView ? this.state : M.initialState(graph);
      this.state.byDispatch = byDispatch;
      this.el.querySelector('.pane-title').textContent = `${graph.level}${graph.source ? ' (as written)' : ''} · ${graph.ops} ops`;
      this.rebuild(keepView);
    }

    rebuild(keepView) {
      this.shown = M.shownGraph(this.graph, this.state);
      this.sections = M.sections(this.shown, M.SECTION_NODES, M.FIRST_SECTION_NODES);
      this.items = new Map();
      this.sectionOf = new Map();
      for (const s of this.sections) {
        for (const item of [...s.proxies, ...s.items]) {
          this.items.set(item.id, item);
          this.sectionOf.set(item.id, s.index);
        }
      }
      this.layouts = new Array(this.sections.length).fill(null);
      this.final = new Array(this.sections.length).fill(false);   // ELK's layout (not a draft)
      this.places = new Array(this.sections.length).fill(null);
      this.world.textContent = '';
      this.groups = this.sections.map((s) => {
        const g = document.createElementNS('http://www.w3.org/2000/svg', 'g');
        g.setAttribute('class', 'section');
        g.dataset.section = String(s.index);
        this.world.appendChild(g);
        return g;
      });
      this.sections.forEach((s, i) => this.placeholder(i));
      this.guilty = this.guiltyItems();
      this.stack();
      if (!keepView) this.view = { x: -20, y: -20, k: 1 };
      this.applyView();
      pump();
    }

    estimate(i) {
      const s = this.sections[i];
      return { width: 400, height: Math.max(60, s.items.length * 48) };
    }

    size(i) {
      const l = this.layouts[i];
      return l ? { width: l.width, height: l.height } : this.estimate(i);
    }

    stack() {
      this.tops = [];
      let y = 0;
      for (let i = 0; i < this.sections.length; i++) {
        this.tops.push(y);
        this.groups[i].setAttribute('transform', `translate(0,${y})`);
        y += this.size(i).height + GAP;
      }
      this.height = y;
    }

    placeholder(i) {
      const { width, height } = this.estimate(i);
      this.groups[i].innerHTML = `<g class="placeholder"><rect width="${width}" height="${height}" rx="6"/>` +
        `<text x="12" y="22">laying out ${this.sections[i].items.length} nodes…</text></g>`;
    }

    draw(i) {
      const layout = this.layouts[i];
      if (!layout) return;
      this.groups[i].innerHTML = M.sectionSvg(this.sections[i], layout, overlay, M.slowestTime(this.graph), dispatchInfo, this.graph);
      for (const id of [...this.selected, ...this.linked]) this.mark(id);
      for (const id of this.guilty) this.markGuilty(this.groups[i], id);
    }

    /** The items that show the ops the last bisect blames (none without one). */
    guiltyItems() {
      if (!divergence || !this.graph || divergence.function !== this.graph.function) return new Set();
      const ids = new Set(M.divergentNodes(this.graph, divergence));
      return new Set(this.itemsOf(this.graph.nodes.filter((n) => ids.has(n.id))));
    }

    /** The bisect's marks again (a new bisect, the dispatches come): on every section drawn. */
    remarkGuilty() {
      this.world.querySelectorAll('.guilty-ring, .guilty-badge').forEach((e) => e.remove());
      this.world.querySelectorAll('.guilty').forEach((e) => e.classList.remove('guilty'));
      this.guilty = this.guiltyItems();
      this.groups.forEach((g) => this.guilty.forEach((id) => this.markGuilty(g, id)));
      document.body.dataset.guilty = String(this.world.querySelectorAll('g.guilty').length);
    }

    /** A ring outside the node's box and a ✗ at its corner: apart from selection's and overlays' marks. */
    markGuilty(section, id) {
      const g = section.querySelector(`g.node[data-id="${CSS.escape(id)}"], g.open-group[data-id="${CSS.escape(id)}"]`);
      if (!g || g.classList.contains('guilty')) return;
      const box = g.querySelector('rect');
      const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((a) => Number(box.getAttribute(a)));
      g.classList.add('guilty');
      const ring = document.createElementNS(SVG_NS, 'rect');
      ring.setAttribute('class', 'guilty-ring');
      Object.entries({ x: x - 4, y: y - 4, width: w + 8, height: h + 8, rx: 7 }).forEach(([k, v]) => ring.setAttribute(k, String(v)));
      const badge = document.createElementNS(SVG_NS, 'text');
      badge.setAttribute('class', 'guilty-badge');
      badge.setAttribute('x', String(x + w - 3));
      badge.setAttribute('y', String(y + 4));
      badge.textContent = '✗';
      g.insertBefore(ring, g.firstChild);
      g.appendChild(badge);
      document.body.dataset.guilty = String(this.world.querySelectorAll('g.guilty').length);
    }

    drawAll() {
      for (let i = 0; i < this.sections.length; i++) this.draw(i);
    }

    laidOut(i, layout, draft) {
      const replacing = this.layouts[i] !== null;
      // (the selected node, in sight on the draft, stays in sight on ELK's layout)
      const kept = replacing && this.selected.find((id) => this.sectionOf.get(id) === i && this.visible(id));
      this.layouts[i] = layout;
      this.final[i] = !draft;
      this.places[i] = M.placements(layout);
      this.stack();
      this.draw(i);
      if (!drawnSent) {
        drawnSent = true;
        markTime('drawn');
        // (a timeout queued in the frame callback runs once that frame is painted)
        requestAnimationFrame(() => setTimeout(() => markTime('painted'), 0));
        vscode.postMessage({ type: 'drawn' });
      }
      if (!draft && !laidOutSent) {
        laidOutSent = true;
        markTime('ELK drawn');
        vscode.postMessage({ type: 'laidOut' });   // (the extension asks for the dispatches now)
      }
      // (fitted again when ELK's layout of the first section replaces its draft, unless zoomed or panned since)
      if (i === 0 && (!this.fitted || (replacing && !this.moved))) {
        this.fitted = true;
        this.fit();
        // (once: a level put beside it later fits the first pane again, which is no opening)
        if (openedAt && this.index === 0 && !document.body.dataset.openMs) {
          const ms = Math.round(performance.now() - openedAt);
          document.body.dataset.openMs = String(ms);
        }
      }
      if (kept && !this.visible(kept)) this.center(kept);
      // A node waited for (the cursor's, a proxy's source): brought into sight if it is not.
      if (this.centerOn && this.sectionOf.get(this.centerOn) === i) {
        if (this.visible(this.centerOn)) this.centerOn = null;
        else this.center(this.centerOn);
      }
      this.applyView();
      status();
    }

    /** Where item `id` is drawn, in the origin lines' overlay (null: not laid out yet). */
    boxOnScreen(id, overlayRect) {
      const p = this.position(id);
      if (!p) return null;
      const rect = this.svg.getBoundingClientRect();
      const k = this.view.k;
      return { x: rect.left - overlayRect.left + (p.x - this.view.x) * k, y: rect.top - overlayRect.top + (p.y - this.view.y) * k,
        width: p.width * k, height: p.height * k };
    }

    /**
     * The section ELK has not laid out yet that is nearest the viewport's middle (a wanted one
     * first); `drafting`: one with no layout at all, in sight (or wanted).
     */
    nextSection(drafting) {
      if (this.centerOn !== null) {
        const s = this.sectionOf.get(this.centerOn);
        if (s !== undefined && !(drafting ? this.layouts[s] : this.final[s])) return s;
      }
      const rect = this.svg.getBoundingClientRect();
      const middle = this.view.y + rect.height / this.view.k / 2;
      const bottom = this.view.y + rect.height / this.view.k;
      let best = -1;
      let distance = Infinity;
      for (let i = 0; i < this.sections.length; i++) {
        if (drafting ? this.layouts[i] || this.tops[i] >= bottom || this.tops[i] + this.size(i).height <= this.view.y : this.final[i]) continue;
        const d = Math.abs(this.tops[i] + this.size(i).height / 2 - middle);
        if (d < distance) {
          distance = d;
          best = i;
        }
      }
      return best < 0 ? null : { index: best, distance };
    }

    applyView() {
      const rect = this.svg.getBoundingClientRect();
      const w = Math.max(1, rect.width) / this.view.k;
      const h = Math.max(1, rect.height) / this.view.k;
      this.svg.setAttribute('viewBox', `${this.view.x} ${this.view.y} ${w} ${h}`);
      // Sections out of sight are not drawn (a 20,000-op function has hundreds).
      for (let i = 0; i < this.sections.length; i++) {
        const top = this.tops[i];
        const visible = top < this.view.y + h + 200 && top + this.size(i).height > this.view.y - 200;
        this.groups[i].style.display = visible ? '' : 'none';
      }
      if (origin) drawOriginLines();
    }

    fit() {
      const rect = this.svg.getBoundingClientRect();
      const width = Math.max(...this.sections.map((s, i) => this.size(i).width), 100);
      this.view.k = Math.min(1.2, Math.max(0.15, rect.width / (width + 40)));
      this.view.x = -20;
      this.moved = false;
      this.applyView();
    }

    /** Fit to the pane's width now, or (its first section not laid out yet) once it is. */
    refit() {
      if (this.layouts[0]) this.fit();
      else this.fitted = false;
    }

    zoom(factor, cx, cy) {
      const rect = this.svg.getBoundingClientRect();
      const px = cx ?? rect.width / 2;
      const py = cy ?? rect.height / 2;
      const wx = this.view.x + px / this.view.k;
      const wy = this.view.y + py / this.view.k;
      this.view.k = Math.min(4, Math.max(0.05, this.view.k * factor));
      this.moved = true;
      this.view.x = wx - px / this.view.k;
      this.view.y = wy - py / this.view.k;
      this.applyView();
      pump();
    }

    position(id) {
      const s = this.sectionOf.get(id);
      const p = s === undefined ? undefined : this.places[s]?.get(id);
      return p ? { x: p.x, y: p.y + this.tops[s], width: p.width, height: p.height } : null;
    }

    center(id) {
      const p = this.position(id);
      if (!p) {
        this.centerOn = id;
        pump();
        return;
      }
      this.centerOn = null;
      const rect = this.svg.getBoundingClientRect();
      this.view.x = p.x + p.width / 2 - rect.width / this.view.k / 2;
      this.view.y = p.y + p.height / 2 - rect.height / this.view.k / 2;
      this.applyView();
      pump();
    }

    visible(id) {
      const p = this.position(id);
      if (!p) return false;
      const rect = this.svg.getBoundingClientRect();
      return p.x >= this.view.x && p.y >= this.view.y && p.x + p.width <= this.view.x + rect.width / this.view.k &&
        p.y + p.height <= this.view.y + rect.height / this.view.k;
    }

    mark(id) {
      const cls = this.selected.includes(id) ? 'selected' : 'linked';
      this.world.querySelectorAll(`g.node[data-id="${CSS.escape(id)}"], g.open-group[data-id="${CSS.escape(id)}"]`)
        .forEach((g) => g.classList.add(cls));
    }

    select(ids, linked, center) {
      this.world.querySelectorAll('.selected, .linked').forEach((g) => g.classList.remove('selected', 'linked'));
      this.selected = [...new Set(ids)];
      this.linked = [...new Set(linked)].filter((id) => !this.selected.includes(id));
      for (const id of [...this.selected, ...this.linked]) this.mark(id);
      const first = this.selected[0] ?? this.linked[0];
      if (center && first && !this.visible(first)) this.center(first);
    }

    /** The items that show graph nodes `nodes`. */
    itemsOf(nodes) {
      return nodes.map((n) => this.shown.itemOf.get(n.id)).filter(Boolean);
    }

    listen() {
      let drag = null;
      this.svg.addEventListener('pointerdown', (e) => {
        // (with the pointer captured, pointerup's target is the svg: the click goes by pointerdown's)
        drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false, target: e.target };
        this.svg.setPointerCapture(e.pointerId);
      });
      this.svg.addEventListener('pointermove', (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x;
        const dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) {
          drag.moved = true;
          this.moved = true;
          this.svg.classList.add('dragging');
        }
        this.view.x = drag.vx - dx / this.view.k;
        this.view.y = drag.vy - dy / this.view.k;
        this.applyView();
      });
      this.svg.addEventListener('pointerup', () => {
        const down = drag;
        drag = null;
        this.svg.classList.remove('dragging');
        if (down && down.moved) {
          pump();
        } else if (down) {
          this.click(down.target);
        }
      });
      this.svg.addEventListener('wheel', (e) => {
        e.preventDefault();
        const rect = this.svg.getBoundingClientRect();
        if (e.ctrlKey || e.metaKey || !e.shiftKey) {
          this.zoom(Math.exp(-e.deltaY / 400), e.clientX - rect.left, e.clientY - rect.top);
        } else {
          this.view.y += e.deltaY / this.view.k;
          this.applyView();
          pump();
        }
      }, { passive: false });
    }

    toggle(id, open) {
      if (open) this.state.expanded.add(id);
      else this.state.expanded.delete(id);
      this.rebuild(true);
      this.center(id);
      status();
    }

    click(target) {
      clearOriginLines();
      const groupTitle = target.closest('.open-group .group-title');
      if (groupTitle) {
        this.toggle(groupTitle.closest('.open-group').dataset.id, false);
        return;
      }
      const g = target.closest('g.node');
      if (!g) return;
      // A second click on a closed group within 400 ms (a double click) opens it.
      const now = performance.now();
      const again = this.lastClick && this.lastClick.id === g.dataset.id && now - this.lastClick.at < 400;
      this.lastClick = { id: g.dataset.id, at: now };
      if (again && g.classList.contains('group')) {
        this.toggle(g.dataset.id, true);
        return;
      }
      let item = this.items.get(g.dataset.id);
      if (!item) return;
      if (item.kind === 'proxy') {
        // A value from elsewhere: go to the op that defines it.
        const source = this.items.get(item.members[0]);
        if (source) {
          this.select([source.id], [], false);
          this.center(source.id);
          item = source;
        }
      } else {
        this.select([item.id], [], false);
      }
      linkOthers(this, item);
      if (item.range) vscode.postMessage({ type: 'reveal', range: item.range });
    }
  }

  const panes = [new Pane(0), new Pane(1)];

  /** The other pane marks the ops made from the same source ops as `item`'s, with a line to each. */
  function linkOthers(from, item) {
    for (const pane of panes) {
      if (pane === from || !pane.graph) continue;
      const nodes = item.members.map((id) => from.graph.nodes.find((n) => n.id === id)).filter(Boolean);
      const matches = nodes.flatMap((n) => M.originMatches(n, pane.graph));
      pane.select([], pane.itemsOf(matches), true);
      if (!pane.el.hidden && pane.linked.length) {
        origin = { from, id: item.id, to: pane, ids: pane.linked };
        drawOriginLines();
      }
    }
  }

  /** The lines from the clicked node to what it became in the other pane (those laid out yet). */
  function drawOriginLines() {
    const overlayEl = $('origin-lines');
    if (!origin || origin.to.el.hidden) {
      clearOriginLines();
      return;
    }
    const at = overlayEl.getBoundingClientRect();
    const from = origin.from.boxOnScreen(origin.id, at);
    const paths = from ? origin.ids.map((id) => origin.to.boxOnScreen(id, at)).filter(Boolean)
      .map((to) => `<path d="${M.originLinePath(from, to)}"/>`) : [];
    overlayEl.innerHTML = paths.join('');
    document.body.dataset.originLines = String(paths.length);
  }

  function clearOriginLines() {
    origin = null;
    $('origin-lines').textContent = '';
    delete document.body.dataset.originLines;
  }

  /** The legend line of the last bisect, and its marks in both panes. */
  function showDivergence() {
    const el = $('divergence');
    const applies = divergence && data && divergence.function === data.function;
    el.hidden = !applies;
    el.textContent = applies ? `${divergence.summary} — ${divergence.ops.length ? `marked: ${[...new Set(divergence.ops.map((o) => o.op))].join(', ')}` : 'its dispatch marked'}` : '';
    panes.forEach((p) => p.graph && p.remarkGuilty());
  }

  /** The section to lay out next, of either pane: the nearest the viewport's middle (see nextSection). */
  function nextWork(drafting) {
    let best = null;
    for (const pane of panes) {
      if (!pane.graph || pane.el.hidden) continue;
      const next = pane.nextSection(drafting);
      if (next === null) continue;
      const candidate = typeof next === 'number' ? { pane, index: next, distance: -1 } : { pane, ...next };
      if (!best || candidate.distance < best.distance) best = candidate;
    }
    return best;
  }

  let busy = false;
  async function pump() {
    if (busy) return;
    const draft = nextWork(true);
    const work = draft || nextWork(false);
    if (!work) return;
    busy = true;
    const { pane, index } = work;
    const sections = pane.sections;
    try {
      if (draft) {
        pane.laidOut(index, M.draftLayout(M.elkGraph(sections[index])), true);
      } else {
        const layout = await (await elkReady).layout(M.elkGraph(sections[index]));
        if (pane.sections === sections) pane.laidOut(index, layout, false);
      }
    } catch (e) {
      showMessage(`layout failed: ${e && e.message ? e.message : e}`);
    } finally {
      busy = false;
    }
    setTimeout(pump, 0);
  }

  function status() {
    const shown = panes.filter((p) => p.graph && !p.el.hidden);
    const parts = shown.map((p) => {
      const done = p.final.filter(Boolean).length;
      return `${p.graph.level}: ${p.graph.ops} ops, ${p.shown.items.length} nodes` +
        (done < p.sections.length ? `, laid out ${done}/${p.sections.length} sections` : '');
    });
    if (document.body.dataset.openMs) parts.push(`opened in ${document.body.dataset.openMs} ms`);
    if (document.body.dataset.commandMs) parts.push(`${document.body.dataset.commandMs} ms after the command`);
    $('status').textContent = parts.join(' · ');
    legend();
  }

  function legend() {
    const el = $('legend');
    const graphs = panes.filter((p) => p.graph && !p.el.hidden).map((p) => p.graph);
    if (overlay === 'dialect') {
      const dialects = [...new Set(graphs.flatMap((g) => g.nodes.map((n) => n.dialect)).filter(Boolean))];
      el.innerHTML = dialects.map((d) => `<span><i style="background:var(--fam-${M.dialectFamily(d)})"></i>${M.escapeXml(d)}</span>`).join('');
    } else if (overlay === 'dispatch') {
      if (data && data.dispatch_error) {
        el.textContent = `no dispatches: ${data.dispatch_error}`;
      } else if (!dispatchInfo.size) {
        el.textContent = data && data.dispatchesDone ? 'no dispatches' : 'forming dispatches…';
      } else {
        const shown = [...dispatchInfo.values()].slice(0, 24);
        el.innerHTML = `<span>${dispatchInfo.size} dispatches (hover a node: its kernel)</span>` + shown.map((d) =>
          `<span title="${M.escapeXml(d.ops.join(', '))}"><i style="background:${M.dispatchColour(d.id)}"></i>${M.escapeXml(d.name)}</span>`).join('');
      }
    } else if (overlay === 'profile') {
      const p = data && data.profile;
      el.textContent = p
        ? `profile of ${p.device || 'a run'}: ${p.dispatches} dispatches, ${M.formatSeconds(p.seconds)}; darker red: more of the time`
        : 'no profile: "profile…" reads the dispatches.json of `mlirtext run --trace-dispatches DIR`';
    } else {
      el.textContent = '';
    }
  }

  function showMessage(text) {
    const el = $('message');
    el.hidden = !text;
    el.textContent = text || '';
  }

  function levelNamed(name) {
    return (data.levels || []).find((l) => l.level === name) || null;
  }

  function fillSelects() {
    const available = data.available || [];
    const first = $('level-0');
    const beside = $('level-1');
    const keep = [first.value, beside.value];
    first.innerHTML = available.map((l, i) => `<option value="${l}">${l}${i === 0 ? ' (as written)' : ''}</option>`).join('');
    beside.innerHTML = '<option value="">none</option>' + available.map((l) => `<option value="${l}">${l}</option>`).join('');
    const shownFirst = (data.levels || [])[0];
    first.value = keep[0] && available.includes(keep[0]) ? keep[0] : shownFirst ? shownFirst.level : available[0] || '';
    beside.value = keep[1] && available.includes(keep[1]) ? keep[1] : '';
  }

  function showGraph(result) {
    data = result;
    showMessage(result.error || '');
    if (!result.levels || !result.levels.length) {
      $('status').textContent = '';
      return;
    }
    fillSelects();
    const wanted = [$('level-0').value, $('level-1').value];
    const wasBeside = !panes[1].el.hidden;
    wanted.forEach((name, i) => {
      const graph = name ? levelNamed(name) : null;
      panes[i].el.hidden = i > 0 && !graph;
      if (panes[i].el.hidden && origin && (origin.from === panes[i] || origin.to === panes[i])) clearOriginLines();
      if (graph && graph !== panes[i].graph) {
        const same = panes[i].graph && panes[i].graph.level === graph.level;
        panes[i].setGraph(graph, same);
      }
    });
    // A pane beside it, or none now: the first pane's width changed, fit the graph to it again.
    if (wasBeside !== !panes[1].el.hidden && panes[0].graph) panes[0].refit();
    status();
  }

  function askLevels() {
    const levels = [$('level-0').value, $('level-1').value].filter(Boolean);
    const missing = levels.filter((l) => !levelNamed(l));
    if (missing.length) {
      $('status').textContent = `lowering to ${missing.join(', ')}…`;
      vscode.postMessage({ type: 'levels', levels: [...new Set(levels)] });
    } else {
      showGraph(data);
    }
    if (!$('level-1').value && !panes[1].el.hidden) {
      panes[1].el.hidden = true;
      clearOriginLines();
      if (panes[0].graph) panes[0].refit();
    }
  }

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (m.type === 'reset') {
      reset(m.fn, m.file);
    } else if (m.type === 'graph') {
      markTime('graph');
      openedAt = openedAt || performance.now();
      if (m.serverMs !== undefined) document.body.dataset.serverMs = String(m.serverMs);
      drawnSent = false;
      laidOutSent = false;
      dispatchInfo.clear();
      for (const d of m.result.dispatches || []) if (d.id !== null) dispatchInfo.set(d.id, d);
      showGraph(m.result);
    } else if (m.type === 'dispatches' && data) {
      const result = m.result;
      data.dispatch_error = result.dispatch_error || result.error || null;
      data.dispatchesDone = true;
      for (const d of result.dispatches || []) if (d.id !== null) dispatchInfo.set(d.id, d);
      for (const pane of panes) {
        const other = pane.graph && (result.levels || []).find((l) => l.level === pane.graph.level);
        if (other) M.mergeDispatches(pane.graph, other, [...pane.items.values()]);
        if (pane.graph && byDispatch) pane.rebuild(true);
        else if (pane.graph) pane.drawAll();
      }
      document.body.dataset.dispatches = String(dispatchInfo.size);
      status();
    } else if (m.type === 'divergence') {
      divergence = m.marks;
      showDivergence();
    } else if (m.type === 'opened') {
      // The extension's account: from the command to the first nodes drawn (and to the page's start).
      document.body.dataset.commandMs = String(m.commandMs);
      if (m.readyMs !== null) document.body.dataset.readyMs = String(m.readyMs);
      status();
      setTimeout(() => timeline(m.commandAt, m.extensionMarks), 50);
    } else if (m.type === 'cursor') {
      for (const pane of panes) {
        if (!pane.graph || pane.el.hidden) continue;
        pane.select(pane.itemsOf(M.nodesAt(pane.graph, m.line, m.character)), [], true);
      }
    }
  });

  /**
   * An open's timeline, in ms after the command reached the extension (the page's clock and the
   * extension host's are the machine's): the extension's steps; on the page's first open its HTML,
   * each file it loaded and its scripts, and ELK's worker; the graph's arrival, the first nodes
   * drawn and painted, ELK's first section drawn. Logged by the extension; the e2e prints it.
   */
  function timeline(commandAt, extensionMarks) {
    const at = (t) => Math.round(performance.timeOrigin + t - commandAt);
    const parts = Object.entries(extensionMarks || {}).map(([k, v]) => `${k} ${v}`);
    const nav = performance.getEntriesByType('navigation')[0];
    if (times.head !== undefined) {
      parts.push(`page navigation ${at(0)}`);
      if (nav) parts.push(`HTML in ${at(nav.responseEnd)}`, `DOM interactive ${at(nav.domInteractive)}`);
      for (const r of performance.getEntriesByType('resource')) {
        if (['xmlhttprequest', 'fetch', 'script', 'link'].includes(r.initiatorType)) {
          parts.push(`${r.name.split('/').pop().split('?')[0]} ${at(r.startTime)}-${at(r.responseEnd)}`);
        }
      }
      for (const p of performance.getEntriesByType('paint')) parts.push(`${p.name} ${at(p.startTime)}`);
    }
    for (const [k, v] of Object.entries(times).sort((a, b) => a[1] - b[1])) parts.push(`${k} ${at(v)}`);
    const text = parts.join(' · ');
    document.body.dataset.timeline = text;
    vscode.postMessage({ type: 'timeline', text });
  }

  /** Another function shown in this page (kept with its ELK worker): the last graph forgotten. */
  function reset(fn, file) {
    for (const key of Object.keys(times)) delete times[key];   // (the open's timeline starts again)
    data = null;
    divergence = null;
    openedAt = 0;
    dispatchInfo.clear();
    clearOriginLines();
    for (const key of ['openMs', 'serverMs', 'commandMs', 'readyMs', 'dispatches', 'guilty', 'timeline']) delete document.body.dataset[key];
    document.body.dataset.opens = String(Number(document.body.dataset.opens || '1') + 1);
    document.querySelector('.bar .sym').textContent = `@${fn}`;
    document.querySelector('.bar .file').textContent = file;
    document.title = `Graph @${fn}`;
    $('level-0').innerHTML = '';
    $('level-1').innerHTML = '<option value="">none</option>';
    $('divergence').hidden = true;
    showMessage('');
    panes.forEach((p, i) => {
      p.graph = null;
      p.state = null;
      p.sections = [];
      p.items = new Map();
      p.sectionOf = new Map();
      p.groups = [];
      p.layouts = [];
      p.final = [];
      p.places = [];
      p.tops = [];
      p.fitted = false;
      p.moved = false;
      p.guilty = new Set();
      p.selected = [];
      p.linked = [];
      p.centerOn = null;
      p.world.textContent = '';
      p.el.querySelector('.pane-title').textContent = '';
      if (i > 0) p.el.hidden = true;
    });
    $('status').textContent = 'asking the server…';
    $('legend').textContent = '';
  }

  $('level-0').addEventListener('change', askLevels);
  $('level-1').addEventListener('change', askLevels);
  $('overlay').addEventListener('change', (e) => {
    overlay = e.target.value;
    panes.forEach((p) => p.graph && p.drawAll());
    legend();
  });
  $('grouping').addEventListener('change', (e) => {
    byDispatch = e.target.value === 'dispatches';
    for (const p of panes) {
      if (!p.graph) continue;
      p.state.byDispatch = byDispatch;
      p.rebuild(true);
    }
    status();
  });
  $('open-all').addEventListener('click', () => panes.forEach((p) => {
    if (!p.graph) return;
    p.graph.nodes.forEach((n) => n.children > 0 && p.state.expanded.add(n.id));
    p.rebuild(true);
  }));
  $('close-all').addEventListener('click', () => panes.forEach((p) => {
    if (!p.graph) return;
    p.state.expanded.clear();
    p.rebuild(true);
  }));
  $('zoom-in').addEventListener('click', () => panes.forEach((p) => p.graph && p.zoom(1.25)));
  $('zoom-out').addEventListener('click', () => panes.forEach((p) => p.graph && p.zoom(0.8)));
  $('fit').addEventListener('click', () => panes.forEach((p) => p.graph && p.fit()));
  $('profile').addEventListener('click', () => vscode.postMessage({ type: 'profile' }));
  window.addEventListener('resize', () => panes.forEach((p) => p.graph && p.applyView()));
  markTime('ready');
  vscode.postMessage({ type: 'ready' });
})();
