/**
 * `tiny-harness conform`: the conformance kit judges rightly. Against the harness, on every
 * transport, everything passes or is skipped for a reason; against the harness behind a proxy
 * that injects one defect, the kit fails on exactly the rules that defect breaks; against an
 * agent without the extension it says so and exits 4; against nothing, or a server that wants
 * a token it was not given, 3 with one line.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { TaskState } from '@a2a-js/sdk';
import { CONFORM_EXIT, runConform, type ConformCommand, type ConformReport } from '@tiny-harness/conform';
import type { Client } from '@a2a-js/sdk/client';
import { cancelCreated } from '../../packages/conform/src/clean-up.js';
import { unreachable } from '../../packages/conform/src/probe-client.js';
import { parseRules } from '../../packages/conform/src/spec-text.js';
import { startBareAgent, type BareAgent } from '../client/bare-agent.js';
import { runCli } from '../client/support.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { unusedBaseURL } from '../fixtures/model-server.js';
import { DEFECTS, startFaultyServer } from './faulty-proxy.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: 'a model reply' } });
});

after(async () => {
  await h?.close();
});

async function conform(options: ConformCommand): Promise<{ code: number; report: ConformReport; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk) => (stdout += chunk));
  err.on('data', (chunk) => (stderr += chunk));
  const code = await runConform({ ...options, json: true }, out, err);
  return { code, report: stdout ? JSON.parse(stdout) : undefined, stderr };
}

const failedRules = (report: ConformReport) =>
  [...new Set(report.results.filter((r) => r.outcome === 'fail').map((r) => r.rule))].sort();

describe('tiny-harness conform against the harness', () => {
  it('every check passes on every transport, or is skipped saying why', async () => {
    const { code, report } = await conform({ url: h.harness.url, allowModel: true });
    assert.deepEqual(
      report.results.filter((r) => r.outcome === 'fail'),
      [],
    );
    assert.equal(code, CONFORM_EXIT.ok);
    assert.deepEqual(report.transports, ['JSONRPC', 'HTTP+JSON', 'GRPC']);
    // Checked at the same time, reported one transport after another in the card's order (the
    // ordinary messages of CMD-2 and CMD-3 go once, on the first transport, after them).
    const order = report.results.flatMap((r) =>
      r.transport && r.rule !== 'CMD-2' && r.rule !== 'CMD-3' ? [r.transport] : [],
    );
    assert.deepEqual(
      order.filter((transport, i) => transport !== order[i - 1]),
      ['JSONRPC', 'HTTP+JSON', 'GRPC'],
    );
    for (const transport of report.transports) {
      assert.ok(
        report.results.some((r) => r.transport === transport && r.rule === 'CMD-8' && r.outcome === 'pass'),
        `CMD-8 checked over ${transport}`,
      );
    }
    const checked = new Set(report.results.filter((r) => r.outcome === 'pass').map((r) => r.rule));
    for (const rule of [
      'CMD-2',
      'CMD-3',
      'CMD-4',
      'CMD-5',
      'CMD-6',
      'CMD-8',
      'CMD-10',
      'CMD-11',
      'CMD-13',
      'CMD-14',
      'CMD-15',
      'CMD-17',
    ])
      assert.ok(checked.has(rule), `${rule} passed`);
    for (const skipped of report.results.filter((r) => r.outcome === 'skip'))
      assert.ok(skipped.detail, `${skipped.rule} says why it was skipped`);
    assert.match(report.command ?? '', /^\/status /, 'the first command that takes no arguments');
  });

  it('CMD-30: with a command that starts a sub-task, task_ref names a task GetTask finds', async () => {
    const { code, report } = await conform({
      url: h.harness.url,
      transports: ['JSONRPC'],
      command: 'spawn count to three',
    });
    assert.equal(code, CONFORM_EXIT.ok, JSON.stringify(report.results.filter((r) => r.outcome === 'fail')));
    assert.ok(report.results.some((r) => r.rule === 'CMD-30' && r.outcome === 'pass'));
  });

  it('the report for a person: one line per check, a summary, exit 0; its tasks are canceled afterwards', async () => {
    const before = (
      await (
        await h.client('JSONRPC')
      ).listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 100,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      })
    ).tasks;
    const result = await runCli(['conform', '--transport', 'grpc', h.harness.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^PASS {2}CMD-10 {2}a command with no task creates a task in INPUT_REQUIRED and replies \[GRPC\]$/m,
    );
    assert.match(result.stdout, /^SKIP {2}CMD-3 /m);
    assert.match(result.stdout, /^\d+ passed, 0 failed, 2 skipped$/m);
    const after = (
      await (
        await h.client('JSONRPC')
      ).listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 100,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      })
    ).tasks;
    const left = after.filter(
      (task) => !before.some((b) => b.id === task.id) && task.status?.state !== TaskState.TASK_STATE_CANCELED,
    );
    assert.deepEqual(
      left.map((t) => t.id),
      [],
      'every task the kit created is canceled',
    );
  });
});

describe("the kit's clean-up", () => {
  it('sends every CancelTask before any is answered: a server slow to cancel costs one wait, not one per task', async () => {
    const sent: string[] = [];
    const answers: Array<() => void> = [];
    const client = {
      cancelTask: ({ id }: { id: string }) => {
        sent.push(id);
        return new Promise((resolve) => answers.push(() => resolve({})));
      },
    } as unknown as Client;
    const cleaning = cancelCreated({ created: new Set(['a', 'b', 'c']) }, client);
    assert.deepEqual(sent, ['a', 'b', 'c']);
    for (const answer of answers) answer();
    await cleaning;
  });
});

describe('tiny-harness conform against deliberately wrong servers', () => {
  for (const [name, { defect, breaks, allowModel }] of Object.entries(DEFECTS)) {
    it(`${name}: fails on ${breaks.join(' and ')}, and nothing else`, async () => {
      const faulty = await startFaultyServer(h.harness.url, defect());
      try {
        const { code, report } = await conform({ url: faulty.url, allowModel });
        assert.deepEqual(
          failedRules(report),
          breaks,
          JSON.stringify(
            report.results.filter((r) => r.outcome === 'fail'),
            null,
            1,
          ),
        );
        assert.equal(code, CONFORM_EXIT.failed);
        for (const failure of report.results.filter((r) => r.outcome === 'fail')) {
          assert.ok(failure.detail, 'says what was seen');
          assert.ok(failure.ruleText && failure.ruleText.length > 20, 'quotes the rule');
        }
      } finally {
        await faulty.close();
      }
    });
  }
});

describe('tiny-harness conform against what is not a Commands server', () => {
  let bare: BareAgent;
  before(async () => {
    bare = await startBareAgent();
  });
  after(async () => {
    await bare?.close();
  });

  it('an agent without the extension: says plainly that it is not declared, exit 4', async () => {
    const result = await runCli(['conform', bare.url]);
    assert.equal(result.code, CONFORM_EXIT.undeclared);
    assert.match(result.stdout, /does not declare the Commands extension/);
  });

  it('nothing listening: exit 3 with one line; bad usage: exit 2', async () => {
    const down = (await unusedBaseURL()).replace(/\/v1$/, '');
    const gone = await runCli(['conform', down]);
    assert.equal(gone.code, CONFORM_EXIT.unreachable);
    assert.equal(gone.stderr, `error: cannot reach ${down} (connection refused)\n`);
    const usage = await Promise.all([
      runCli(['conform', '--transport', 'carrier-pigeon', h.harness.url]),
      runCli(['conform', '--only', 'rule-4', h.harness.url]),
      runCli(['conform']),
      runCli(['conform', '--jsn', h.harness.url]),
    ]);
    for (const result of usage) assert.equal(result.code, CONFORM_EXIT.usage, result.stderr);
    assert.equal(usage[3]!.stderr, "error: unknown option '--jsn' (Did you mean --json?)\n");
  });
});

describe('tiny-harness conform against a server that wants a token', () => {
  const TOKEN = 'conform-token-0123456789';
  const AUTH_REQUIRED = "error: authentication required: pass --header 'Authorization: Bearer ...'\n";
  let secured: TestHarness;
  let closedCard: Server;
  let closedCardUrl: string;
  before(async () => {
    secured = await startTestHarness({
      script: { reply: 'a model reply' },
      harness: { auth: { tokens: new Map([[TOKEN, 'alice']]) } },
    });
    closedCard = createServer((_request, response) => response.writeHead(401).end());
    await new Promise<void>((resolve) => closedCard.listen(0, '127.0.0.1', resolve));
    closedCardUrl = `http://127.0.0.1:${(closedCard.address() as AddressInfo).port}`;
  });
  after(async () => {
    await secured?.close();
    closedCard?.close();
  });

  it('calls refused (401 over HTTP, UNAUTHENTICATED over gRPC): one line saying what to pass, exit 3', async () => {
    const results = await Promise.all([
      runCli(['conform', secured.harness.url]),
      runCli(['conform', '--transport', 'grpc', secured.harness.url]),
    ]);
    for (const result of results) {
      assert.equal(result.code, CONFORM_EXIT.unreachable, result.stdout + result.stderr);
      assert.equal(result.stderr, AUTH_REQUIRED);
      assert.equal(result.stdout, '');
    }
  });

  it('a card refused (401): the same line, exit 3; with the token the checks run and pass', async () => {
    const card = await runCli(['conform', closedCardUrl]);
    assert.equal(card.code, CONFORM_EXIT.unreachable);
    assert.equal(card.stderr, AUTH_REQUIRED);
    const { code, report } = await conform({
      url: secured.harness.url,
      transports: ['JSONRPC'],
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(code, CONFORM_EXIT.ok, JSON.stringify(report.results.filter((r) => r.outcome === 'fail')));
  });
});

describe('the words for a server that cannot be reached', () => {
  it('names what the network said: refused, host not found, timed out, lost; never a stack', () => {
    const failed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code }) });
    const url = 'http://agent.example';
    assert.equal(unreachable(url, failed('ECONNREFUSED')), `cannot reach ${url} (connection refused)`);
    assert.equal(unreachable(url, failed('ENOTFOUND')), `cannot reach ${url} (host not found)`);
    assert.equal(unreachable(url, failed('UND_ERR_CONNECT_TIMEOUT')), `cannot reach ${url} (timed out)`);
    assert.equal(
      unreachable(url, new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      `cannot reach ${url} (timed out)`,
    );
    assert.equal(unreachable(url, failed('ECONNRESET')), `cannot reach ${url} (the connection was lost)`);
    const refusedTwice = new TypeError('fetch failed', {
      cause: new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })]),
    });
    assert.equal(unreachable(url, refusedTwice), `cannot reach ${url} (connection refused)`);
  });
});

describe('the rules the kit quotes', () => {
  it('reads every rule of spec/behaviour.md, each on one line', () => {
    const rules = parseRules('## x\n\n- **CMD-1** A message is\n  a command.\n- **CMD-2** Two.\n\n## y\n');
    assert.deepEqual(
      [...rules.entries()],
      [
        ['CMD-1', 'A message is a command.'],
        ['CMD-2', 'Two.'],
      ],
    );
  });
});
