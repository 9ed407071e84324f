import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { makeFifo, recordingLogger } from '../file-commands/support.js';
import { startServerProcess } from './process.js';
import { send, startTestHarness, textOf, TRANSPORTS, type TestHarness, commandsEntry } from './support.js';
import { poll } from '../support/wait.js';

let h: TestHarness;
let dir: string;
const log = recordingLogger();

async function cardCommands(): Promise<Array<{ name: string; description: string; argument_hint: string }>> {
  const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
  return commandsEntry(card).params.commands;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-commands-'));
  writeFileSync(
    join(dir, 'review.md'),
    '---\ndescription: Review a file for bugs\nargument-hint: <file> [focus]\ncontext: fork\n---\nReview $1, focusing on $2.\nAll: $ARGUMENTS\n',
  );
  writeFileSync(join(dir, 'Bad Name.md'), '---\ndescription: never loaded\n---\nx\n');
  writeFileSync(join(dir, 'help.md'), '---\ndescription: would replace a built-in\n---\nx\n');
  writeFileSync(
    join(dir, 'echoed.md'),
    '---\ndescription: Runs on the offline model\nmodel: builtin:echo\ncontext: fork\n---\nSay $ARGUMENTS\n',
  );
  writeFileSync(join(dir, 'repeat.md'), `---\ndescription: Says it twenty times\n---\n${'$ARGUMENTS\n'.repeat(20)}`);
  // Opening a named pipe for reading waits for a writer: it must be skipped, not opened.
  makeFifo(join(dir, 'x.md'));
  h = await startTestHarness({ harness: { commandsDir: dir, log } });
});

after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('commands written in files', () => {
  it('load after the built-ins in file-name order; bad files are skipped, the rest load', async () => {
    assert.deepEqual(
      (await cardCommands()).map((c) => c.name),
      [
        'help',
        'model',
        'status',
        'stop',
        'spawn',
        'compact',
        'rewind',
        'fork',
        'context',
        'memory',
        'schedule',
        'unschedule',
        'skills',
        'agents',
        'echoed',
        'repeat',
        'review',
      ],
    );
    assert.deepEqual((await cardCommands()).at(-1), {
      name: 'review',
      description: 'Review a file for bugs',
      argument_hint: '<file> [focus]',
    });
  });

  it('/help ends with the command files that were skipped and why, naming no path outside the folder', async () => {
    const client = await h.client('JSONRPC');
    const help = textOf((await send(client, '/help')).status?.message);
    const skipped = help.split('Command files skipped (fix them and they load by themselves):\n')[1] ?? '';
    assert.match(skipped, /^- Bad Name\.md: /m);
    assert.match(skipped, /^- help\.md: /m);
    assert.match(skipped, /^- x\.md: /m);
    assert.ok(!help.includes(dir), "the folder's path stays in the log");
  });

  for (const transport of TRANSPORTS) {
    it(`CMD-30: a file command with context: fork starts a sub-task on the expanded prompt and replies with task_ref (${transport})`, async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Hi');
      const replied = await send(client, '/review src/cli.ts flags', { taskId: parent.id });
      const ref = replied.status!.message!.metadata!.task_ref as string;
      assert.deepEqual(replied.status!.message!.metadata, { command: 'review', task_ref: ref });
      const child = await poll('the sub-task completed', async () => {
        const task = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
      });
      assert.equal(textOf(child.history[0]), 'Review src/cli.ts, focusing on flags.\nAll: src/cli.ts flags');
      const asked = h
        .chatRequests()
        .find((body) => JSON.stringify(body.messages).includes('Review src/cli.ts, focusing on flags.'));
      assert.ok(asked, 'the fixture model was asked with the expanded prompt');
      assert.equal(asked.model, 'small', "the parent's model");

      const echoed = await send(client, '/echoed hello there', { taskId: parent.id });
      const echoRef = echoed.status!.message!.metadata!.task_ref as string;
      const echoChild = await poll('the echoed sub-task completed', async () => {
        const task = await client.getTask({ tenant: '', id: echoRef, historyLength: 0 });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
      });
      assert.match(textOf(echoChild.status!.message), /builtin:echo/, "the file's model");
    });
  }

  it('CMD-16: adding, changing and removing a file updates the served card within seconds, without a restart', async () => {
    writeFileSync(join(dir, 'deploy.md'), '---\ndescription: Deploy it\n---\nDeploy $1\n');
    await poll('/deploy on the card', async () => (await cardCommands()).some((c) => c.name === 'deploy'));
    writeFileSync(
      join(dir, 'deploy.md'),
      '---\ndescription: Deploy it carefully\nargument-hint: <env>\n---\nDeploy $1\n',
    );
    await poll(
      "/deploy's new description on the card",
      async () => (await cardCommands()).find((c) => c.name === 'deploy')?.description === 'Deploy it carefully',
    );
    assert.deepEqual(
      (await cardCommands()).map((c) => c.name),
      [
        'help',
        'model',
        'status',
        'stop',
        'spawn',
        'compact',
        'rewind',
        'fork',
        'context',
        'memory',
        'schedule',
        'unschedule',
        'skills',
        'agents',
        'deploy',
        'echoed',
        'repeat',
        'review',
      ],
    );
    unlinkSync(join(dir, 'deploy.md'));
    await poll('/deploy gone from the card', async () => !(await cardCommands()).some((c) => c.name === 'deploy'));
    const client = await h.client('JSONRPC');
    const task = await send(client, 'Hi');
    const replied = await send(client, '/deploy prod', { taskId: task.id });
    assert.equal(
      replied.status!.message!.metadata?.command,
      undefined,
      'a removed command is an ordinary message again',
    );
  });

  it('a named pipe in the folder is skipped with a warning naming it: the server starts, and later files still load', async () => {
    assert.ok(
      log.lines.some((line) =>
        line.startsWith(
          `warn command file skipped: ${join(dir, 'x.md')}: not a regular file (it is a named pipe (FIFO))`,
        ),
      ),
      log.lines.join('\n'),
    );
    makeFifo(join(dir, 'y.md'));
    writeFileSync(join(dir, 'after-pipe.md'), '---\ndescription: Written after a pipe\n---\nDo $1\n');
    await poll('/after-pipe on the card', async () => (await cardCommands()).some((c) => c.name === 'after-pipe'));
    assert.ok(log.lines.some((line) => line.includes(`${join(dir, 'y.md')}: not a regular file`)));
    unlinkSync(join(dir, 'y.md'));
    unlinkSync(join(dir, 'after-pipe.md'));
    await poll(
      '/after-pipe gone from the card',
      async () => !(await cardCommands()).some((c) => c.name === 'after-pipe'),
    );
  });

  it('CMD-12: a file command whose prompt would pass the limit says so in the conversation and starts nothing', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const replied = await send(client, `/repeat ${'a'.repeat(10_000)}`, { taskId: parent.id });
    assert.deepEqual(replied.status!.message!.metadata, { command: 'repeat' }, 'a reply, with no task_ref');
    assert.equal(replied.status!.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(
      textOf(replied.status!.message),
      // 20 × 10,000 characters and 19 line breaks (the template is trimmed).
      '/repeat with these arguments would make a prompt of 200,019 characters, over the limit of 200,000: give shorter arguments.',
    );
    assert.ok(
      log.lines.some(
        (line) =>
          line.startsWith('warn file command refused') && line.includes('"file":"repeat.md"') && !line.includes('aaaa'),
      ),
    );
  });
});

describe('the command line with a named pipe in the commands folder', () => {
  it('starts, names the pipe in its log, and stops cleanly on SIGTERM', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tiny-harness-fifo-'));
    try {
      const commands = join(root, 'commands');
      const config = join(root, 'config.json');
      writeFileSync(config, JSON.stringify({ detectOllama: false }));
      const server = await startServerProcess([
        '--data-dir',
        join(root, 'data'),
        '--commands-dir',
        commands,
        '--config',
        config,
      ]);
      try {
        makeFifo(join(commands, 'x.md'));
        writeFileSync(join(commands, 'later.md'), '---\ndescription: After the pipe\n---\nDo it\n');
        await poll('/later on the card', async () => {
          const card = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
          return commandsEntry(card).params.commands.some((c: { name: string }) => c.name === 'later');
        });
        // The log reaches this process through a pipe, possibly after the card changed.
        await poll('the pipe named in the log', () =>
          /command file skipped: [^"]*x\.md: not a regular file/.test(server.stderr()),
        );
      } finally {
        assert.equal(await server.stop('SIGTERM'), 0, 'a clean shutdown exits 0');
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
