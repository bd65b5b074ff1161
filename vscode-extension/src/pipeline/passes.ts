/**
 * The pass explorer of the pipeline view: every pass of the lowering as a step (a list, and
 * previous / next), each with its inline diff against the step before (ops matched by the
 * source op they came from, so a rewritten op shows removed beside what replaced it, and a
 * renumbered one is no change), a toggle that hides the passes that changed nothing, and a
 * search box across the steps. Rendered here from the server's `steps`; media/pipeline.js
 * steps, hides and searches. Long runs of unchanged lines come cut to a few around each
 * change (a "skip" line says how many are left out). Pure.
 */
import { formatSeconds } from '../runInputs';
import { escapeHtml, highlightLine, namedDefinitions, opName } from './highlight';
import { Divergence, divergenceMark, isGuilty } from './divergence';
import { PassStep, StepLine } from './model';

const MARKS: Record<StepLine['kind'], string> = { '': ' ', added: '+', removed: '−', changed: '~', moved: '↕', skip: '⋯' };

/** The step shown first: the guilty pass of a bisect, else the first pass that changed something, else the input. */
export function firstStep(steps: PassStep[], divergence?: Divergence): number {
  const guilty = steps.find((s) => isGuilty(divergence, s.level, s.pass));
  return guilty?.index ?? steps.find((s) => s.pass !== null && s.changed)?.index ?? 0;
}

/** The steps listed: all, or (hiding unchanged ones) the input and the passes that changed something. */
export function listedSteps(steps: PassStep[], hideUnchanged: boolean): PassStep[] {
  return steps.filter((s) => !hideUnchanged || s.pass === null || s.changed);
}

/** `+3 −8 ~2 ↕1`: how many ops each kind of change touched. */
export function changeCounts(step: PassStep): string {
  const parts: string[] = [];
  for (const kind of ['added', 'removed', 'changed', 'moved'] as const) {
    const n = step.counts?.[kind];
    if (n) {
      parts.push(`${MARKS[kind]}${n}`);
    }
  }
  return parts.join(' ');
}

export function renderPassExplorer(steps: PassStep[] | undefined, divergence?: Divergence): string {
  if (!steps?.length) {
    return '';
  }
  const current = firstStep(steps, divergence);
  const unchanged = steps.filter((s) => s.pass !== null && !s.changed).length;
  const items = steps.map((s) => renderListItem(s, current, divergence)).join('');
  const panes = steps.map((s, i) => renderStep(s, steps, i, current)).join('\n');
  return `<section class="pass-explorer" id="pass-explorer" data-current="${current}">
<div class="px-bar">
  <h2>Passes</h2>
  <button id="px-prev" title="the previous pass shown (←)">◀ prev</button>
  <button id="px-next" title="the next pass shown (→)">next ▶</button>
  <label class="px-toggle"><input type="checkbox" id="px-hide-unchanged" checked> hide the ${unchanged} passes that changed nothing</label>
  <input type="search" id="px-search" placeholder="search every step" aria-label="search every step">
  <span class="muted" id="px-found"></span>
</div>
<div class="px-body">
<ol class="px-list" id="px-list">${items}</ol>
<div class="px-steps">${panes}</div>
</div>
</section>`;
}

function renderListItem(step: PassStep, current: number, divergence?: Divergence): string {
  const name = step.pass ?? 'input';
  const state = step.pass === null ? 'input' : step.changed ? 'changed' : 'unchanged';
  const guilty = divergence && isGuilty(divergence, step.level, step.pass);
  const hidden = state === 'unchanged' && !guilty ? ' hidden' : '';   // (the guilty pass always shows)
  const ops = step.pass === null ? `${step.ops_after} ops` : `${step.ops_before} → ${step.ops_after}`;
  return (
    `<li class="px-item ${state}${guilty ? ' guilty' : ''}${step.index === current ? ' on' : ''}" data-step="${step.index}" data-changed="${step.changed ? 1 : 0}"${hidden}>` +
    `<span class="px-n">${step.index}</span><span class="px-pass">${escapeHtml(name)}${guilty ? ` ${divergenceMark(divergence)}` : ''}</span>` +
    `<span class="px-lvl fam-text-${escapeHtml(step.level ?? 'other')}">${escapeHtml(step.level ?? '')}</span>` +
    `<span class="num">${step.pass === null ? '' : formatSeconds(step.seconds)}</span>` +
    `<span class="num px-ops">${ops}</span></li>`
  );
}

function renderStep(step: PassStep, steps: PassStep[], i: number, current: number): string {
  const title = step.pass === null ? 'input' : step.pass;
  const detail =
    step.pass === null
      ? `${step.level ?? ''} · ${step.ops_after} ops`
      : `${step.level ?? ''} · ${formatSeconds(step.seconds)} · ${step.ops_before} → ${step.ops_after} ops`;
  let body: string;
  if (step.pass !== null && !step.changed) {
    const shown = steps.slice(0, i).reverse().find((s) => s.pass === null || s.changed);
    body = `<p class="muted px-none">${escapeHtml(title)} changed nothing: the IR is as after ${
      shown ? `step ${shown.index} (${escapeHtml(shown.pass ?? 'input')})` : 'the step before'
    }.</p>`;
  } else {
    body = `<pre class="code diff">${step.lines.map(renderDiffLine).join('')}</pre>`;
  }
  const about = step.pass !== null && step.changed
    ? `<div class="px-summary"><span class="px-counts">${escapeHtml(changeCounts(step))}</span> ${escapeHtml(step.summary)}</div>`
    : '';
  return `<article class="px-step" data-step="${step.index}"${step.index === current ? '' : ' hidden'}>
<h3><span class="name">${step.index}. ${escapeHtml(title)}</span><span class="detail">${escapeHtml(detail)}</span></h3>
${about}${body}
</article>`;
}

/** One line of a diff: marked by its kind, clickable as an op (its origin) like a level's line. */
export function renderDiffLine(line: StepLine, n: number): string {
  if (line.kind === 'skip') {
    return `<div class="ln d-skip" data-line="${n}"><span class="mark">${MARKS.skip}</span>${escapeHtml(line.text)}</div>`;
  }
  const op = opName(line.text);
  const defs = namedDefinitions(line.text);
  const classes = ['ln', 'd-' + (line.kind || 'same')];
  if (op) {
    classes.push('op');
  }
  const attrs =
    (defs.length ? ` data-defs="${escapeHtml(defs.join(' '))}"` : '') +
    (typeof line.origin === 'number' ? ` data-origin="${line.origin}"` : '') +
    (op ? ` data-op="${escapeHtml(op)}"` : '');
  return `<div class="${classes.join(' ')}" data-line="${n}"${attrs}><span class="mark">${MARKS[line.kind] ?? ' '}</span>${highlightLine(line.text) || ' '}</div>`;
}
