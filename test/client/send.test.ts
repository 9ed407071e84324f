import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SendMessageResponse, StreamResponse, TaskState } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI } from '../../src/commands/index.js';
import { unusedBaseURL } from '../fixtures/model-server.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { startBareAgent, type BareAgent } from './bare-agent.js';
import { runCli, taskLine } from './support.js';

const ANSWER = 'one two three four five six seven eight nine ten';

let h: TestHarness;
let bare: BareAgent;
let rateLimited = 0;

before(async () => {
  h = await startTestHarness({
    script: {
      reply: ANSWER,
      chunkDelayMs: 40,
      fail: (body) => {
        const sent = JSON.stringify(body.messages);
        if (sent.includes('make the model fail')) return { kind: 'status', status: 500 };
        // Rate limited the first time only, tried again at once.
        if (sent.includes('rate limited once') && ++rateLimited === 1)
          return { kind: 'status', status: 429, message: 'slow down', headers: { 'retry-after-ms': '0' } };
        return undefined;
      },
    },
  });
  bare = await startBareAgent();
});

after(async () => {
  await h?.close();
  await bare?.close();
});

function lastUserText(body: any): string {
  const users = (body?.messages ?? []).filter((m: any) => m.role === 'user');
  return JSON.stringify(users.at(-1)?.content ?? '');
}

describe('tiny-harness send', () => {
  it('prints the reply on stdout and the task on stderr, exit 0', async () => {
    const result = await runCli(['send', h.harness.url, 'what', 'is', 'it?']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${ANSWER}\n`);
    const { taskId, contextId, state } = taskLine(result.stderr);
    assert.match(taskId, /^[0-9a-f-]{36}$/);
    assert.match(contextId, /^[0-9a-f-]{36}$/);
    assert.equal(state, 'input-required');
    assert.match(lastUserText(h.chatRequests().at(-1)), /what is it\?/);
  });

  it('--stream prints the reply as it arrives', async () => {
    const result = await runCli(['send', '--stream', h.harness.url, 'stream it']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${ANSWER}\n`);
    assert.ok(result.chunks.length > 2, `expected several writes, got ${JSON.stringify(result.chunks)}`);
    assert.ok(!result.chunks[0]!.includes('ten'), 'the first write came before the whole reply');
  });

  it('--stream prints the notice of a retry on stderr as it comes, and the reply on stdout', async () => {
    const result = await runCli(['send', '--stream', h.harness.url, 'rate limited once']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${ANSWER}\n`);
    assert.match(
      result.stderr,
      /^\[notice\] Model fixture:small failed: the provider is rate limiting or out of quota \(HTTP 429\)\. The provider said: "slow down"\. Retrying \(attempt 2 of 3\)…$/m,
    );
  });

  it('--json prints the A2A SendMessageResponse, and --stream --json one StreamResponse per line', async () => {
    const blocking = await runCli(['send', '--json', h.harness.url, 'as json']);
    assert.equal(blocking.code, 0, blocking.stderr);
    const lines = blocking.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const response = SendMessageResponse.fromJSON(JSON.parse(lines[0]!));
    assert.equal(response.payload?.$case, 'task');
    const task = response.payload!.value as any;
    assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(task.id, taskLine(blocking.stderr).taskId);

    const streamed = await runCli(['send', '--json', '--stream', h.harness.url, 'as json lines']);
    assert.equal(streamed.code, 0, streamed.stderr);
    const events = streamed.stdout
      .trim()
      .split('\n')
      .map((line) => StreamResponse.fromJSON(JSON.parse(line)));
    assert.equal(events[0]!.payload?.$case, 'task');
    assert.ok(events.filter((e) => e.payload?.$case === 'artifactUpdate').length >= 10);
    const last = events.at(-1)!.payload!;
    assert.equal(last.$case, 'statusUpdate');
    assert.equal((last.value as any).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('--task continues the task (the model sees the first message), --context starts one in a context', async () => {
    const first = await runCli(['send', h.harness.url, 'remember the word pelican']);
    const { taskId, contextId } = taskLine(first.stderr);
    const second = await runCli(['send', '--task', taskId, '--context', contextId, h.harness.url, 'which word?']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(taskLine(second.stderr).taskId, taskId);
    assert.match(JSON.stringify(h.chatRequests().at(-1).messages), /pelican[\s\S]*which word\?/);

    const third = await runCli(['send', '--context', contextId, h.harness.url, 'a new task here']);
    assert.equal(third.code, 0, third.stderr);
    assert.notEqual(taskLine(third.stderr).taskId, taskId);
    assert.equal(taskLine(third.stderr).contextId, contextId);
  });

  it('a command reply is printed as the reply; a sub-task is named on stderr; no command reaches the model', async () => {
    const before = h.chatRequests().length;
    const status = await runCli(['send', h.harness.url, '/status']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /State: input required/);
    assert.match(status.stdout, /fixture:small/);
    const streamed = await runCli(['send', '--stream', h.harness.url, '/model']);
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.match(streamed.stdout, /fixture:large/);
    assert.equal(h.chatRequests().length, before);

    // A command on a task whose last reply was a command's prints its own reply alone.
    const { taskId } = taskLine(status.stderr);
    const again = await runCli(['send', '--task', taskId, h.harness.url, '/model', 'nosuch']);
    assert.equal(again.code, 6, again.stderr);
    const other = await runCli(['send', '--task', taskId, h.harness.url, '/model']);
    assert.equal(other.code, 0, other.stderr);
    assert.doesNotMatch(other.stdout, /nosuch/, 'the earlier reply is not printed again');
    assert.match(other.stdout, /fixture:large/);

    const spawned = await runCli(['send', h.harness.url, '/spawn', 'count to three']);
    assert.equal(spawned.code, 0, spawned.stderr);
    assert.match(spawned.stderr, /sub-task [0-9a-f-]{36} started/);
  });

  it('--wait follows the sub-task a command started and prints its result; off a terminal it does not wait unless asked', async () => {
    const waited = await runCli(['send', '--wait', h.harness.url, '/spawn', 'count to three']);
    assert.equal(waited.code, 0, waited.stderr);
    const id = /sub-task ([0-9a-f-]{36}) started/.exec(waited.stderr)![1]!;
    assert.match(waited.stderr, new RegExp(`sub-task ${id} completed`));
    assert.ok(waited.stdout.trimEnd().endsWith(ANSWER), `the sub-task's result on stdout:\n${waited.stdout}`);

    const json = await runCli(['send', '--wait', '--json', h.harness.url, '/spawn', 'count again']);
    assert.equal(json.code, 0, json.stderr);
    const task = JSON.parse(json.stdout.trim().split('\n').at(-1)!);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');

    const piped = await runCli(['send', h.harness.url, '/spawn', 'and once more']);
    assert.doesNotMatch(
      piped.stderr,
      /waiting for sub-task/,
      'standard output is not a terminal here: no wait by default',
    );
    assert.doesNotMatch(piped.stdout, new RegExp(ANSWER));

    const both = await runCli(['send', '--wait', '--no-wait', h.harness.url, 'hi']);
    assert.equal(both.code, 2);
  });

  it('--wait exits 1 when a sub-task it waited for failed', async () => {
    const failed = await runCli(['send', '--wait', h.harness.url, '/spawn', 'make the model fail']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /sub-task [0-9a-f-]{36} failed/);
  });

  it('exit 1 with one line when the agent cannot be reached or refuses the request', async () => {
    const down = new URL(await unusedBaseURL()).origin;
    const unreachable = await runCli(['send', down, 'hello?']);
    assert.equal(unreachable.code, 1);
    assert.equal(unreachable.stdout, '');
    assert.equal(unreachable.stderr, `error: cannot reach ${down} (connection refused)\n`);

    const refused = await runCli(['send', '--task', 'no-such-task', h.harness.url, 'hello?']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: the agent refused the request: .*no-such-task.*\n$/);
    assert.doesNotMatch(refused.stderr, /\n\s+at /);
  });

  it('exit 1 when the task ends FAILED, with its message', async () => {
    const result = await runCli(['send', bare.url, 'fail']);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, 'it failed on purpose\n');
    assert.match(result.stderr, /state=failed/);
  });

  it('exit 2 on bad usage', async () => {
    const cases = [
      ['send'],
      ['send', h.harness.url],
      ['send', 'not a url', 'hi'],
      ['send', h.harness.url, 'hi', '--header', 'no colon'],
      ['send', h.harness.url, 'hi', '--nope'],
    ];
    const results = await Promise.all(cases.map((args) => runCli(args)));
    results.forEach((result, i) => {
      assert.equal(result.code, 2, `${cases[i]!.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^error: /);
      assert.equal(result.stdout, '');
    });
  });

  it('--header reaches the agent on every request, with the extension activated; an agent without the extension works', async () => {
    const result = await runCli([
      'send',
      '--header',
      'Authorization: Bearer s3cret',
      '--header',
      'X-Trace: 42',
      bare.url,
      'hello bare',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'echo: hello bare\n');
    assert.match(result.stderr, /state=completed/);
    const paths = bare.requests.map((r) => r.path);
    assert.ok(paths.some((p) => p.includes('agent-card')) && paths.some((p) => p.startsWith('/a2a/')), paths.join(' '));
    for (const request of bare.requests.slice(-2)) {
      assert.equal(request.headers.authorization, 'Bearer s3cret');
      assert.equal(request.headers['x-trace'], '42');
      assert.match(
        String(request.headers['a2a-extensions']),
        new RegExp(COMMANDS_EXTENSION_URI.replace(/[.]/g, '\\.')),
      );
    }
  });
  it("a turn that ended without the model's reply exits 3, the reason on standard output, blocking or streamed", async () => {
    for (const flags of [[], ['--stream']]) {
      const result = await runCli(['send', ...flags, h.harness.url, 'please make the model fail']);
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stdout, /Send the message again to retry/);
    }
  });
});
