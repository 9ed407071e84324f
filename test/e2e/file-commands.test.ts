import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { eventually, send, startTestHarness, textOf, TRANSPORTS, type TestHarness } from './support.js';

let h: TestHarness;
let dir: string;

async function cardCommands(): Promise<Array<{ name: string; description: string; argument_hint: string }>> {
  const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
  return card.capabilities.extensions[0].params.commands;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-commands-'));
  writeFileSync(join(dir, 'review.md'), '---\ndescription: Review a file for bugs\nargument-hint: <file> [focus]\n---\nReview $1, focusing on $2.\nAll: $ARGUMENTS\n');
  writeFileSync(join(dir, 'Bad Name.md'), '---\ndescription: never loaded\n---\nx\n');
  writeFileSync(join(dir, 'help.md'), '---\ndescription: would replace a built-in\n---\nx\n');
  writeFileSync(join(dir, 'echoed.md'), '---\ndescription: Runs on the offline model\nmodel: builtin:echo\n---\nSay $ARGUMENTS\n');
  h = await startTestHarness({ harness: { commandsDir: dir } });
});

after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('commands written in files', () => {
  it('load after the built-ins in file-name order; bad files are skipped, the rest load', async () => {
    assert.deepEqual((await cardCommands()).map((c) => c.name), ['help', 'model', 'status', 'spawn', 'echoed', 'review']);
    assert.deepEqual((await cardCommands()).at(-1), { name: 'review', description: 'Review a file for bugs', argument_hint: '<file> [focus]' });
  });

  for (const transport of TRANSPORTS) {
    it(`CMD-30: a file command starts a sub-task on the expanded prompt and replies with task_ref (${transport})`, async () => {
      const client = await h.client(transport);
      const parent = await send(client, 'Hi');
      const replied = await send(client, '/review src/cli.ts flags', { taskId: parent.id });
      const ref = replied.status!.message!.metadata!.task_ref as string;
      assert.deepEqual(replied.status!.message!.metadata, { command: 'review', task_ref: ref });
      const child = await eventually(async () => {
        const task = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
      });
      assert.equal(textOf(child.history[0]), 'Review src/cli.ts, focusing on flags.\nAll: src/cli.ts flags');
      const asked = h.chatRequests().find((body) => JSON.stringify(body.messages).includes('Review src/cli.ts, focusing on flags.'));
      assert.ok(asked, 'the fixture model was asked with the expanded prompt');
      assert.equal(asked.model, 'small', "the parent's model");

      const echoed = await send(client, '/echoed hello there', { taskId: parent.id });
      const echoRef = echoed.status!.message!.metadata!.task_ref as string;
      const echoChild = await eventually(async () => {
        const task = await client.getTask({ tenant: '', id: echoRef, historyLength: 0 });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED ? task : undefined;
      });
      assert.match(textOf(echoChild.status!.message), /builtin:echo/, "the file's model");
    });
  }

  it('CMD-16: adding, changing and removing a file updates the served card within seconds, without a restart', async () => {
    writeFileSync(join(dir, 'deploy.md'), '---\ndescription: Deploy it\n---\nDeploy $1\n');
    await eventually(async () => (await cardCommands()).some((c) => c.name === 'deploy') || undefined, 5000);
    writeFileSync(join(dir, 'deploy.md'), '---\ndescription: Deploy it carefully\nargument-hint: <env>\n---\nDeploy $1\n');
    await eventually(async () => (await cardCommands()).find((c) => c.name === 'deploy')?.description === 'Deploy it carefully' || undefined, 5000);
    assert.deepEqual((await cardCommands()).map((c) => c.name), ['help', 'model', 'status', 'spawn', 'deploy', 'echoed', 'review']);
    unlinkSync(join(dir, 'deploy.md'));
    await eventually(async () => !(await cardCommands()).some((c) => c.name === 'deploy') || undefined, 5000);
    const client = await h.client('JSONRPC');
    const task = await send(client, 'Hi');
    const replied = await send(client, '/deploy prod', { taskId: task.id });
    assert.equal(replied.status!.message!.metadata?.command, undefined, 'a removed command is an ordinary message again');
  });
});
