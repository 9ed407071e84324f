/**
 * `tiny-harness send` as scripts use it, the real command line against the harness: the tool
 * calls on standard error blocking as streamed, the exit codes of a turn waiting for approval
 * and of a failed command, `/approve` and `/deny` followed into the turn they resume, and the
 * text read from standard input.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SEND_EXIT } from '../../src/client/exit-codes.js';
import { APPROVE_ECHO, reply, toolCalls } from '../e2e/approval-support.js';
import { startTestHarness, textOf, type TestHarness } from '../e2e/support.js';
import { poll } from '../support/wait.js';
import { runCli, runCliWithInput, taskLine } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { toolCalls, reply }, config: APPROVE_ECHO });
});

after(async () => {
  await h?.close();
});

const toolLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('[tool] '));

/** The text of the user's last message the model was sent. */
const lastUserText = () =>
  String(
    h
      .chatRequests()
      .at(-1)
      .messages.filter((m: any) => m.role === 'user')
      .at(-1)?.content,
  );

describe('tiny-harness send: tool calls and exit codes', () => {
  it('a blocking send lists the tool calls on standard error as --stream does; a turn waiting for approval exits 5', async () => {
    const [blocking, streamed] = await Promise.all([
      runCli(['send', h.harness.url, 'echo and fail']),
      runCli(['send', '--stream', h.harness.url, 'echo and fail']),
    ]);
    for (const result of [blocking, streamed]) {
      assert.equal(result.code, SEND_EXIT.awaitingApproval, result.stderr);
      assert.equal(taskLine(result.stderr).state, 'input-required');
      assert.match(result.stdout, /\/approve/, 'the reply says how to answer');
      assert.doesNotMatch(result.stdout, /\[tool\]/, 'standard output stays the reply');
    }
    const lines = toolLines(blocking.stderr);
    assert.deepEqual(lines, toolLines(streamed.stderr));
    assert.equal(lines.length, 2, blocking.stderr);
    assert.ok(
      lines.some((line) => /^\[tool\] fx_fail \{\} · failed/.test(line)),
      blocking.stderr,
    );
    assert.ok(lines.includes('[tool] fx_echo {"text":"after"} · awaiting approval'), blocking.stderr);
  });

  it('a command that failed exits 6, its reply on standard output, blocking or streamed; one that worked exits 0', async () => {
    for (const flags of [[], ['--stream']]) {
      const unknown = await runCli(['send', ...flags, h.harness.url, '/model', 'nosuch']);
      assert.equal(unknown.code, SEND_EXIT.commandFailed, unknown.stderr);
      assert.match(unknown.stdout, /Unknown model "nosuch"/);
      const usage = await runCli(['send', ...flags, h.harness.url, '/spawn']);
      assert.equal(usage.code, SEND_EXIT.commandFailed, usage.stderr);
      assert.match(usage.stdout, /Say what the sub-task should do/);
      const fine = await runCli(['send', ...flags, h.harness.url, '/model']);
      assert.equal(fine.code, SEND_EXIT.ok, fine.stderr);
    }
  });
});

describe('tiny-harness send: /approve and /deny follow the turn they resume (CMD-33)', () => {
  /** A turn paused on `fx_echo`, sent by the command line: its task id. */
  const paused = async (word: string) => {
    const sent = await runCli(['send', h.harness.url, `please echo ${word}`]);
    assert.equal(sent.code, SEND_EXIT.awaitingApproval, sent.stderr);
    return taskLine(sent.stderr).taskId;
  };

  it("CMD-33: a blocking send /approve waits for the resumed turn, prints the command's reply then the turn's, and exits as the turn ended", async () => {
    const taskId = await paused('apples');
    const approved = await runCli(['send', '--task', taskId, h.harness.url, '/approve']);
    assert.equal(approved.code, SEND_EXIT.ok, approved.stderr);
    assert.equal(approved.stdout, 'Approved fx_echo. The turn resumes.\ntool said: echo: apples\n');
    assert.deepEqual(toolLines(approved.stderr), ['[tool] fx_echo {"text":"apples"} · succeeded · echo: apples']);
    assert.equal(taskLine(approved.stderr).state, 'input-required');
  });

  it("CMD-33: a blocking send /deny waits for the resumed turn and prints the turn's reply to the refusal", async () => {
    const taskId = await paused('pears');
    const denied = await runCli(['send', '--task', taskId, h.harness.url, '/deny', 'not', 'today']);
    assert.equal(denied.code, SEND_EXIT.ok, denied.stderr);
    assert.match(denied.stdout, /^Denied fx_echo\. The turn resumes\.\ntool said: .*not today/);
    // A denied call ends canceled, its output the refusal.
    assert.deepEqual(
      toolLines(denied.stderr).map((line) => line.split(' · ')[1]),
      ['canceled'],
    );
  });

  it('CMD-33: a send /approve that leaves a call waiting prints its reply alone; the next /approve follows the turn, --json as a stream', async () => {
    const sent = await runCli(['send', h.harness.url, 'please echo twice']);
    assert.equal(sent.code, SEND_EXIT.awaitingApproval, sent.stderr);
    const { taskId } = taskLine(sent.stderr);
    const [one, two] = [...sent.stdout.matchAll(/\(id ([0-9a-f-]{36})\)/g)].map((match) => match[1]!);
    const first = await runCli(['send', '--task', taskId, h.harness.url, '/approve', one!]);
    assert.equal(first.code, SEND_EXIT.ok, first.stderr);
    assert.match(
      first.stdout,
      /^Approved fx_echo\. The turn resumes once every call has an answer\. Waiting: fx_echo \(id [^)]+\)\.\n$/,
    );
    const second = await runCli(['send', '--json', '--task', taskId, h.harness.url, '/approve', two!]);
    assert.equal(second.code, SEND_EXIT.ok, second.stderr);
    const events = second.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.ok(events.length > 2, 'the command reply, then the resumed turn, one StreamResponse per line');
    assert.equal(events[0].task?.id, taskId);
    const last = events.at(-1).statusUpdate;
    assert.equal(last?.status?.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.match(last.status.message.parts[0].text, /^tool said: /);
  });

  it("CMD-33: send --no-wait /approve prints the command's reply alone, as before; the turn resumes on the agent", async () => {
    const taskId = await paused('plums');
    const approved = await runCli(['send', '--no-wait', '--task', taskId, h.harness.url, '/approve']);
    assert.equal(approved.code, SEND_EXIT.ok, approved.stderr);
    assert.equal(approved.stdout, 'Approved fx_echo. The turn resumes.\n');
    assert.deepEqual(toolLines(approved.stderr), []);
    const client = await h.client('JSONRPC');
    await poll('the resumed turn to end', async () => {
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      return textOf(task.status?.message) === 'tool said: echo: plums' || undefined;
    });
  });
});

describe('tiny-harness send: the text from standard input', () => {
  it('reads the text from a pipe when none is given, and from "-"', async () => {
    const piped = await runCliWithInput(['send', h.harness.url], 'piped words\nover two lines\n');
    assert.equal(piped.code, SEND_EXIT.ok, piped.stderr);
    assert.equal(lastUserText(), 'piped words\nover two lines');
    assert.equal(piped.stdout, 'plain answer to piped words\nover two lines\n');

    const dash = await runCliWithInput(['send', h.harness.url, '-'], '/status\n');
    assert.equal(dash.code, SEND_EXIT.ok, dash.stderr);
    assert.match(dash.stdout, /State: input required/);
  });

  it('text given as arguments wins over standard input', async () => {
    const result = await runCliWithInput(['send', h.harness.url, 'from', 'arguments'], 'from the pipe');
    assert.equal(result.code, SEND_EXIT.ok, result.stderr);
    assert.equal(lastUserText(), 'from arguments');
  });

  it('an empty input is bad usage, said in one line, and nothing is sent', async () => {
    const before = h.chatRequests().length;
    for (const result of [
      await runCliWithInput(['send', h.harness.url], ' \n'),
      await runCliWithInput(['send', h.harness.url, '-'], ''),
    ]) {
      assert.equal(result.code, SEND_EXIT.usage);
      assert.equal(result.stderr, 'error: standard input was empty: there is no text to send\n');
      assert.equal(result.stdout, '');
    }
    assert.equal(h.chatRequests().length, before);
  });
});
