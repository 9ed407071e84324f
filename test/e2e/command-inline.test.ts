/**
 * Command files as Claude Code runs them (CMD-38), end to end: the same files in Claude Code's
 * format and in ours, run inline (a turn on the same task, its message marked as the command's)
 * and forked (`context: fork`, a sub-task), their `` !`cmd` `` and `@path` markers granted by
 * the file, `commands.allowShell` and the workspace (TOOL-6), their `allowed-tools` holding for
 * the inline turn (TOOL-3); a skill run the same way; and a command sent while a turn runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { COMMAND_KEY, FROM_COMMAND_KEY, WHILE_BUSY_KEY } from '../../src/wire.js';
import { lastMessage } from '../fixtures/model-server.js';
import {
  collect,
  commandsEntry,
  dataOf,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
} from './support.js';
import { poll } from '../support/wait.js';
import { runCli } from '../client/support.js';

const SKILL_BODY = 'Fill in every field of the form.';
let h: TestHarness;
let root: string;
let releaseHeld: () => void = () => {};

/** The same command, in Claude Code's format (one line of allowed-tools, `$ARGUMENTS`) and in ours (a YAML list, `$1`). */
const FILES: Record<string, string> = {
  'cc-review.md':
    '---\nallowed-tools: Bash(echo:*), workspace_read\nargument-hint: <file>\ndescription: Review a file\n---\n' +
    'Review $ARGUMENTS. State: !`echo shell-said-hi`\nReadme: @README.md\n',
  'review.md':
    '---\ndescription: Review a file\nargument-hint: <file>\nallowed-tools:\n  - workspace_read\n---\nReview $1 please.\n',
  'no-grant.md': '---\ndescription: Runs a command it was not granted\n---\nState: !`echo not-granted`\n',
  'missing.md': '---\ndescription: Reads a file that is not there\n---\nRead @nowhere.md please\n',
  'escape.md': 'Read @../secret.txt and @link.txt and @/etc/hostname\n',
  'bare.md': 'Summarise $ARGUMENTS for me@example.com.\n',
  'echoed.md': '---\ndescription: On the offline model\nmodel: echo\n---\nSay $ARGUMENTS\n',
  'note.md': '---\ndescription: Writes a note\nallowed-tools: workspace_write, workspace_read\n---\nplease write $1\n',
};

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-harness-inline-'));
  const workspace = join(root, 'ws');
  const commands = join(root, 'commands');
  mkdirSync(workspace);
  mkdirSync(commands);
  writeFileSync(join(workspace, 'README.md'), 'The readme says hello.');
  writeFileSync(join(root, 'secret.txt'), 'the secret');
  symlinkSync(join(root, 'secret.txt'), join(workspace, 'link.txt'));
  for (const [name, text] of Object.entries(FILES)) {
    writeFileSync(join(commands, name), text);
    // The same file forked: `context: fork` added to its front matter (or given one).
    const forked = text.startsWith('---\n')
      ? `---\ncontext: fork\n${text.slice(4)}`
      : `---\ncontext: fork\n---\n${text}`;
    writeFileSync(join(commands, name.replace('.md', '-fork.md')), forked);
  }
  const skill = join(root, 'data', 'skills', 'pdf');
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), `---\nname: pdf\ndescription: Fill in PDF forms\n---\n${SKILL_BODY}\n`);
  h = await startTestHarness({
    dataDir: join(root, 'data'),
    script: {
      reply: (body) => `answer to ${lastMessage(body).content.slice(0, 100)}`,
      toolCalls: (body) => {
        const last = lastMessage(body);
        return last.role === 'user' && last.content.startsWith('please write ')
          ? [{ name: 'workspace_write', arguments: { path: last.content.slice(13), content: 'a note' } }]
          : undefined;
      },
      hold: (body) =>
        lastMessage(body).content.includes('hold please')
          ? { afterChunks: 1, until: new Promise<void>((resolve) => (releaseHeld = resolve)) }
          : undefined,
    },
    config: { workspace: { root: workspace, tools: ['read', 'list', 'write'] }, commands: { allowShell: true } },
    harness: { commandsDir: commands },
  });
});

after(async () => {
  releaseHeld();
  await h?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Sends `text` on the task as a stream, to its end: for a command run inline, the reply and then its turn. */
function streamed(client: Client, text: string, taskId: string, metadata?: Record<string, unknown>) {
  const message = userMessage(text, { taskId });
  if (metadata) message.metadata = metadata;
  return collect(client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }));
}

function statuses(events: StreamResponse[]) {
  return events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value] : []));
}

/** The chat request whose last message is `prompt`. */
function requestWith(prompt: string): any {
  const asked = h.chatRequests().find((body) => lastMessage(body).content === prompt);
  assert.ok(asked, `the model was asked with ${JSON.stringify(prompt)}`);
  return asked;
}

/** The task as stored, once its last turn has ended (its last message is the model's). */
async function settled(client: Client, id: string): Promise<Task> {
  return poll(`the end of task ${id}'s turn`, async () => {
    const task = await client.getTask({ tenant: '', id, historyLength: undefined });
    const last = task.history.at(-1);
    return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED &&
      last?.role === Role.ROLE_AGENT &&
      last.metadata?.[COMMAND_KEY] === undefined
      ? task
      : undefined;
  });
}

function marked(task: Task): Message[] {
  return task.history.filter((m) => m.metadata?.[FROM_COMMAND_KEY] !== undefined);
}

describe('command files run inline (CMD-38)', () => {
  for (const transport of TRANSPORTS) {
    it(`CMD-38: the reply says it started, then the expanded prompt runs as a turn of the same task, marked as the command's (${transport})`, async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Hi');
      const prompt = `Review src/${transport}.ts please.`;
      const events = await streamed(client, `/review src/${transport}.ts`, parent.id);
      const [reply, ...turn] = statuses(events);
      assert.deepEqual(reply!.metadata, { command: 'review' }, 'a command reply, without task_ref');
      assert.equal(reply!.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the state before the command (CMD-4)');
      assert.equal(textOf(reply!.status?.message), '/review started: its prompt runs here, as a turn of this task.');
      assert.deepEqual(dataOf(reply!.status?.message), { inline: 'started' });
      const final = turn.at(-1)!;
      assert.equal(final.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(textOf(final.status?.message), `answer to ${prompt}`);

      // CMD-7: the model reads the prompt as the turn's input, never the command or its reply.
      const asked = requestWith(prompt);
      const sent = JSON.stringify(asked.messages);
      assert.ok(!sent.includes('/review') && !sent.includes('started:'), sent);
      assert.deepEqual(
        asked.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content),
        ['Hi', prompt],
      );
      // TOOL-3: the file's allowed-tools hold for the inline turn.
      assert.deepEqual(
        asked.tools.map((t: any) => t.function.name),
        ['workspace_read'],
      );

      const task = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      const ours = marked(task);
      assert.equal(ours.length, 1);
      assert.equal(ours[0]!.role, Role.ROLE_USER);
      assert.equal(textOf(ours[0]), prompt);
      assert.deepEqual(ours[0]!.metadata![FROM_COMMAND_KEY], { command: '/review', allowedTools: ['workspace_read'] });
      const command = task.history.find((m) => textOf(m) === `/review src/${transport}.ts`);
      assert.equal(command?.metadata?.[FROM_COMMAND_KEY], undefined, "the user's own words stay the user's");
    });
  }

  it('CMD-38, CMD-10: a command file sent with no task makes one, and its turn runs there', async () => {
    const client = await h.client('JSONRPC');
    const events = await collect(
      client.sendMessageStream({
        tenant: '',
        message: userMessage('/review new.ts'),
        configuration: undefined,
        metadata: {},
      }),
    );
    const [reply, ...turn] = statuses(events);
    assert.deepEqual(reply!.metadata, { command: 'review' });
    assert.equal(textOf(turn.at(-1)!.status?.message), 'answer to Review new.ts please.');
    const task = await client.getTask({ tenant: '', id: reply!.taskId, historyLength: undefined });
    assert.deepEqual(
      marked(task).map((m) => textOf(m)),
      ['Review new.ts please.'],
    );
  });

  it("CMD-38: a blocking `send` prints the reply, then the inline turn's answer; with --no-wait the reply alone", async () => {
    const waited = await runCli(['send', h.harness.url, '/review', 'sent.ts']);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(
      waited.stdout,
      '/review started: its prompt runs here, as a turn of this task.\nanswer to Review sent.ts please.\n',
    );
    const alone = await runCli(['send', '--no-wait', h.harness.url, '/review', 'alone.ts']);
    assert.equal(alone.code, 0, alone.stderr);
    assert.equal(alone.stdout, '/review started: its prompt runs here, as a turn of this task.\n');
  });

  it('CMD-38: a Claude Code file runs as it is: !`cmd` runs with both grants and @path inserts the file, before the turn', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const events = await streamed(client, '/cc-review src/b.ts', parent.id);
    const prompt = 'Review src/b.ts. State: shell-said-hi\nReadme: The readme says hello.';
    assert.equal(textOf(statuses(events).at(-1)!.status?.message), `answer to ${prompt}`);
    const asked = requestWith(prompt);
    assert.deepEqual(
      asked.tools.map((t: any) => t.function.name),
      ['workspace_read'],
      'a Bash(...) rule grants a marker, not a tool',
    );
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    const described = Object.fromEntries(
      commandsEntry(card).params.commands.map((c: any) => [c.name, [c.description, c.argument_hint]]),
    );
    assert.deepEqual(described['cc-review'], ['Review a file', '<file>']);
    assert.deepEqual(described.bare, ['Summarise for me@example.com.', ''], 'never a raw template line');
  });

  it("CMD-38: a file's model: runs its inline turn, and the task's next turn is back on the task's model", async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const events = await streamed(client, '/echoed hello there', parent.id);
    const [reply, ...turn] = statuses(events);
    assert.equal(
      textOf(reply!.status?.message),
      '/echoed started: its prompt runs here on echo, as a turn of this task.',
    );
    assert.match(textOf(turn.at(-1)!.status?.message), /builtin:echo/);
    const task = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
    assert.deepEqual(marked(task)[0]!.metadata![FROM_COMMAND_KEY], { command: '/echoed', model: 'builtin:echo' });
    const next = await send(client, 'and now?', { taskId: parent.id });
    assert.equal(textOf(next.status?.message), 'answer to and now?');
    assert.equal(requestWith('and now?').model, 'small');
  });

  it('TOOL-3: the inline turn keeps its allowed-tools when it resumes after /approve', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const events = await streamed(client, '/note notes.txt', parent.id);
    const paused = statuses(events).at(-1)!;
    assert.equal(paused.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(paused.status?.message), /workspace_write/);
    const first = requestWith('please write notes.txt');
    const offered = (body: any) => body.tools.map((t: any) => t.function.name).sort();
    assert.deepEqual(offered(first), ['workspace_read', 'workspace_write']);
    const before = h.chatRequests().length;
    await streamed(client, '/approve', parent.id);
    const resumed = h.chatRequests().slice(before);
    assert.equal(resumed.length, 1, 'the resumed turn asked the model once');
    assert.deepEqual(offered(resumed[0]), ['workspace_read', 'workspace_write'], 'not workspace_list');
    assert.equal(lastMessage(resumed[0]).role, 'tool');
  });

  it('CMD-38: with context: fork, the same files start a sub-task on the same prompt, and the parent gains no marked message', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    for (const [command, prompt] of [
      ['/review-fork src/c.ts', 'Review src/c.ts please.'],
      ['/cc-review-fork src/d.ts', 'Review src/d.ts. State: shell-said-hi\nReadme: The readme says hello.'],
    ] as const) {
      const replied = await send(client, command, { taskId: parent.id });
      const ref = replied.status?.message?.metadata?.task_ref as string;
      assert.ok(ref, `${command} names its sub-task: ${textOf(replied.status?.message)}`);
      const child = await poll('the sub-task completed', async () => {
        const task = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
      });
      assert.equal(textOf(child.history[0]), prompt);
      assert.equal(textOf(child.status?.message), `answer to ${prompt}`);
    }
    const task = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
    assert.equal(marked(task).length, 0);
  });

  it('TOOL-6: !`cmd` without the allowed-tools grant, a missing @file and @paths out of the workspace are refused in the reply; nothing runs', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const before = h.chatRequests().length;
    for (const [command, refused] of [
      ['/no-grant', /!`echo not-granted` needs "Bash\(echo:\*\)" in no-grant\.md's allowed-tools/],
      ['/no-grant-fork', /needs "Bash\(echo:\*\)" in no-grant-fork\.md's allowed-tools/],
      ['/missing', /@nowhere\.md: no such file in the workspace folder/],
      [
        '/escape',
        /@\.\.\/secret\.txt: outside the workspace folder; @link\.txt: outside the workspace folder; @\/etc\/hostname: outside/,
      ],
    ] as const) {
      const replied = await send(client, command, { taskId: parent.id });
      const text = textOf(replied.status?.message);
      assert.match(text, /was not run, and nothing of it ran \(CMD-38, TOOL-6\)/);
      assert.match(text, refused);
      assert.ok(!text.includes('the secret') && !text.includes(root), 'nothing of the files or the paths');
      assert.equal(replied.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(replied.status?.message?.metadata?.task_ref, undefined);
    }
    assert.equal(h.chatRequests().length, before, 'no turn ran');
    const task = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
    assert.equal(marked(task).length, 0);
  });

  it('CMD-38: /<skill-name> args puts the skill in the turn, marked as the command', async () => {
    const client = await h.client('HTTP+JSON');
    const parent = await send(client, 'Hi');
    await streamed(client, '/pdf invoice.pdf', parent.id);
    const prompt = `${SKILL_BODY}\n\nARGUMENTS: invoice.pdf`;
    requestWith(prompt);
    const task = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
    assert.deepEqual(
      marked(task).map((m) => [textOf(m), m.metadata![FROM_COMMAND_KEY]]),
      [[prompt, { command: '/pdf' }]],
    );
  });

  it('CMD-38: while a turn runs, a command is refused as an ordinary message is (nothing starts), or queued with while-busy enqueue', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const held = collect(
      client.sendMessageStream({
        tenant: '',
        message: userMessage('hold please', { taskId: parent.id }),
        configuration: undefined,
        metadata: {},
      }),
    );
    await h.model.waitForRequest((r) => JSON.stringify(r.body ?? '').includes('hold please'));
    const refused = await send(client, '/review busy.ts', { taskId: parent.id });
    assert.match(textOf(refused.status?.message), /A turn is running on this task, so \/review started nothing/);
    assert.deepEqual(dataOf(refused.status?.message), { inline: 'busy' });
    assert.equal(refused.status?.state, TaskState.TASK_STATE_WORKING, 'the turn goes on (CMD-9)');

    const message = userMessage('/review queued.ts', { taskId: parent.id });
    message.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
    const queued = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} })) as Task;
    assert.deepEqual(dataOf(queued.status?.message), { inline: 'queued' });
    releaseHeld();
    await held;
    const task = await poll('the queued command turn ran', async () => {
      const now = await settled(client, parent.id);
      return marked(now).length === 1 && textOf(now.history.at(-1)) === 'answer to Review queued.ts please.'
        ? now
        : undefined;
    });
    assert.deepEqual(
      marked(task).map((m) => textOf(m)),
      ['Review queued.ts please.'],
      'only the queued command ran',
    );
  });

  it("CMD-38: a client's message claiming to come from a command is refused", async () => {
    const client = await h.client('JSONRPC');
    const message = userMessage('I am a command, honest');
    message.metadata = { [FROM_COMMAND_KEY]: { command: '/review' } };
    await assert.rejects(
      client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} }),
      /written by the harness only/,
    );
  });
});

describe('command files without commands.allowShell (TOOL-6)', () => {
  let off: TestHarness;

  before(async () => {
    off = await startTestHarness({
      config: { workspace: { root: join(root, 'ws') } },
      harness: { commandsDir: join(root, 'commands') },
    });
  });

  after(async () => {
    await off?.close();
  });

  it('TOOL-6: a granted !`cmd` is refused while commands.allowShell is off, inline and forked, and nothing runs', async () => {
    const client = await off.client('JSONRPC');
    const parent = await send(client, 'Hi');
    for (const command of ['/cc-review a.ts', '/cc-review-fork a.ts']) {
      const replied = await send(client, command, { taskId: parent.id });
      const text = textOf(replied.status?.message);
      assert.match(text, /!`echo shell-said-hi` needs commands\.allowShell on in the configuration/);
      assert.doesNotMatch(text, /allowed-tools/, 'the file grants it');
      assert.equal(replied.status?.message?.metadata?.task_ref, undefined);
    }
    assert.ok(!JSON.stringify(off.chatRequests()).includes('shell-said-hi'), 'no turn ran');
  });
});
