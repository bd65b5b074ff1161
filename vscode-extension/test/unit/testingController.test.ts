/**
 * The Testing panel's controller against a stand-in for the `vscode` module and a server that
 * answers as `mlirtext.testItems` / `mlirtext.runTests` do: what it lists, what a run sends, and
 * how each result is reported (the real workbench is the e2e's).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

class FakeUri {
  constructor(readonly value: string) {}
  get scheme(): string {
    return this.value.split(':')[0];
  }
  toString(): string {
    return this.value;
  }
}

class Collection {
  private readonly map = new Map<string, any>();
  constructor(private readonly owner: any) {}
  add(item: any): void {
    item.parent = this.owner;
    this.map.set(item.id, item);
  }
  get(id: string): any {
    return this.map.get(id);
  }
  delete(id: string): void {
    this.map.delete(id);
  }
  replace(items: any[]): void {
    this.map.clear();
    for (const i of items) this.add(i);
  }
  forEach(fn: (item: any) => void): void {
    [...this.map.values()].forEach(fn);
  }
  get size(): number {
    return this.map.size;
  }
}

const disposable = { dispose() {} };
const event = () => disposable;
let controller: any;
let workspaceFiles: FakeUri[] = [];
const runs: any[] = [];

class TestMessage {
  location: any;
  expectedOutput?: string;
  actualOutput?: string;
  constructor(readonly message: string) {}
  static diff(message: string, expected: string, actual: string): TestMessage {
    const m = new TestMessage(message);
    m.expectedOutput = expected;
    m.actualOutput = actual;
    return m;
  }
}

const fakeVscode = {
  Uri: { parse: (s: string) => new FakeUri(s) },
  Range: class {
    constructor(readonly startLine: number, readonly startCharacter: number, readonly endLine: number, readonly endCharacter: number) {}
  },
  Location: class {
    constructor(readonly uri: FakeUri, readonly range: any) {}
  },
  TestMessage,
  TestRunProfileKind: { Run: 1 },
  tests: {
    createTestController(id: string, label: string) {
      controller = {
        id,
        label,
        profiles: [] as any[],
        createTestItem: (itemId: string, itemLabel: string, uri: FakeUri) => {
          const item: any = { id: itemId, label: itemLabel, uri, parent: undefined };
          item.children = new Collection(item);
          return item;
        },
        createRunProfile(profileLabel: string, kind: number, handler: any, isDefault: boolean) {
          this.profiles.push({ profileLabel, kind, handler, isDefault });
        },
        createTestRun(request: any) {
          const run = { request, events: [] as any[], ended: false } as any;
          for (const what of ['started', 'passed', 'failed', 'errored', 'skipped']) {
            run[what] = (item: any, ...rest: any[]) => run.events.push([what, item.id, ...rest]);
          }
          run.end = () => (run.ended = true);
          runs.push(run);
          return run;
        },
        dispose() {},
      };
      controller.items = new Collection(undefined);
      return controller;
    },
  },
  workspace: {
    textDocuments: [] as any[],
    createFileSystemWatcher: () => ({ onDidCreate: event, onDidDelete: event, onDidChange: event, dispose() {} }),
    onDidOpenTextDocument: event,
    onDidChangeTextDocument: event,
    findFiles: async () => workspaceFiles,
    asRelativePath: (uri: FakeUri) => uri.value.split('/').pop(),
  },
};

const Module = require('node:module');
const load = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakeVscode : load.call(this, request, ...rest);
};
const { MlirTestController } = require('../../src/testing/controller');

const A = 'file:///w/a.mlir';
const EMPTY = 'file:///w/empty.mlir';
const ITEMS: Record<string, unknown> = {
  [A]: {
    items: [
      { id: 'chunk:0', kind: 'chunk', label: 'chunk 1 (line 1): 1 expected diagnostic', range: [0, 0, 5, 1], chunk: 0, function: null },
      { id: 'chunk:1', kind: 'chunk', label: 'chunk 2 (line 10): 1 expected diagnostic', range: [9, 0, 13, 1], chunk: 1, function: null },
      { id: 'function:2:adds_wrong', kind: 'function', label: '@adds_wrong', range: [24, 0, 29, 1], chunk: 2, function: 'adds_wrong' },
    ],
    error: null,
  },
  [EMPTY]: { items: [], error: null },
};
const RESULTS: Record<string, any> = {
  'chunk:0': { id: 'chunk:0', status: 'passed', message: '', seconds: 0.002, failures: [] },
  'chunk:1': {
    id: 'chunk:1',
    status: 'failed',
    message: '2 mismatches',
    seconds: 0.003,
    failures: [
      { message: 'expected error "requires the same shape" was not produced', range: [10, 5, 10, 50], expected: 'error: requires the same shape', actual: "error: 'arith.addf' op requires the same type" },
    ],
  },
  'function:2:adds_wrong': { id: 'function:2:adds_wrong', status: 'error', message: 'no semantics', seconds: 0.1, failures: [] },
};

const sent: any[] = [];
const client = {
  code2ProtocolConverter: { asUri: (u: FakeUri) => u.toString() },
  sendRequest: async (method: string, params: any) => {
    sent.push([method, params]);
    const [uri, ids] = params.arguments;
    if (params.command === 'mlirtext.testItems') return ITEMS[uri];
    return { results: (ids as string[]).map((id) => RESULTS[id] ?? { id, status: 'error', message: `no test '${id}'`, seconds: 0, failures: [] }), error: null };
  },
};
const server = { ready: async () => client, require: async () => client };

test('the workspace lists files by name; expanding one lists its tests, a file without any leaves', async () => {
  new MlirTestController(server);
  assert.equal(controller.id, 'mlirtext');
  assert.equal(controller.label, 'MLIR');
  workspaceFiles = [new FakeUri(A), new FakeUri(EMPTY)];
  await controller.resolveHandler(undefined);
  assert.equal(controller.items.size, 2);
  assert.equal(sent.length, 0, 'nothing is asked before a file is expanded');
  await controller.resolveHandler(controller.items.get(A));
  await controller.resolveHandler(controller.items.get(EMPTY));
  assert.equal(controller.items.get(EMPTY), undefined);
  const file = controller.items.get(A);
  const labels: string[] = [];
  file.children.forEach((c: any) => labels.push(c.label));
  assert.deepEqual(labels, ['chunk 1 (line 1): 1 expected diagnostic', 'chunk 2 (line 10): 1 expected diagnostic', '@adds_wrong']);
  const chunk2 = file.children.get(`${A}#chunk:1`);
  assert.deepEqual([chunk2.range.startLine, chunk2.range.endLine], [9, 13]);
});

test('running one test sends its id alone; a failure is a diff at its line', async () => {
  sent.length = 0;
  const chunk2 = controller.items.get(A).children.get(`${A}#chunk:1`);
  const [profile] = controller.profiles;
  assert.equal(profile.isDefault, true);
  await profile.handler({ include: [chunk2], exclude: [] }, { isCancellationRequested: false });
  assert.deepEqual(sent.map(([, p]) => p.arguments), [[A, ['chunk:1']]]);
  const run = runs[runs.length - 1];
  assert.equal(run.ended, true);
  const [started, failed] = run.events;
  assert.deepEqual(started, ['started', `${A}#chunk:1`]);
  assert.equal(failed[0], 'failed');
  const [message] = failed[2];
  assert.equal(message.message, 'expected error "requires the same shape" was not produced');
  assert.equal(message.expectedOutput, 'error: requires the same shape');
  assert.equal(message.actualOutput, "error: 'arith.addf' op requires the same type");
  assert.equal(message.location.uri.toString(), A);
  assert.deepEqual([message.location.range.startLine, message.location.range.startCharacter], [10, 5]);
  assert.equal(failed[3], 3);
});

test('running everything runs each file once, less what is excluded; an error without failures shows at the test', async () => {
  sent.length = 0;
  const file = controller.items.get(A);
  const excluded = file.children.get(`${A}#chunk:0`);
  await controller.profiles[0].handler({ include: undefined, exclude: [excluded] }, { isCancellationRequested: false });
  const runCalls = sent.filter(([, p]) => p.command === 'mlirtext.runTests').map(([, p]) => p.arguments);
  assert.deepEqual(runCalls, [[A, ['chunk:1', 'function:2:adds_wrong']]]);
  const run = runs[runs.length - 1];
  const outcomes = run.events.filter((e: any[]) => e[0] !== 'started').map((e: any[]) => [e[0], e[1]]);
  assert.deepEqual(outcomes, [
    ['failed', `${A}#chunk:1`],
    ['errored', `${A}#function:2:adds_wrong`],
  ]);
  const errored = run.events.find((e: any[]) => e[0] === 'errored');
  assert.equal(errored[2][0].message, 'no semantics');
  assert.deepEqual(errored[2][0].location.range.startLine, 24);
});

test('a run the server cannot answer marks each test errored with why', async () => {
  const broken = { ...client, sendRequest: async () => ({ results: [], error: "unknown document 'x'" }) };
  const before = runs.length;
  const file = controller.items.get(A);
  const saved = (server as any).require;
  (server as any).require = async () => broken;
  try {
    await controller.profiles[0].handler({ include: [file], exclude: [] }, { isCancellationRequested: false });
  } finally {
    (server as any).require = saved;
  }
  const run = runs[before];
  const errored = run.events.filter((e: any[]) => e[0] === 'errored');
  assert.equal(errored.length, 3);
  assert.equal(errored[0][2].message, "mlirtext: unknown document 'x'");
});
