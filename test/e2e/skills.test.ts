/**
 * Skills end to end: the harness with a skills folder, the fixture model scripted to call the
 * `skill` tool. The model is offered the names and descriptions only, and reads a skill's body
 * or files through the tool (TOOL-6 for files outside the skill); people list skills with
 * `/skills` and run one with `/<skill-name> args`, inline (CMD-38).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { FROM_COMMAND_KEY, TOOL_CALLS_EXTENSION_URI, toolCallsOf } from '../../src/wire.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { dataOf, send, startTestHarness, textOf, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';

const BODY = 'Fill in every field of the form, then check the totals.';
let h: TestHarness;
let root: string;

function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  if (last.content.includes('use the pdf skill')) return [{ name: 'skill', arguments: { name: 'pdf' } }];
  if (last.content.includes('read the forms file'))
    return [{ name: 'skill', arguments: { name: 'pdf', file: 'forms.md' } }];
  if (last.content.includes('escape the skill'))
    return [{ name: 'skill', arguments: { name: 'pdf', file: '../../secret.txt' } }];
  return undefined;
}

const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content.slice(0, 300)}` : 'plain answer';
};

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-harness-skills-'));
  writeFileSync(join(root, 'secret.txt'), 'the secret');
  const skill = join(root, 'data', 'skills', 'pdf');
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), `---\nname: pdf\ndescription: Fill in PDF forms\n---\n${BODY}\n`);
  writeFileSync(join(skill, 'forms.md'), 'Form W-9 has eight fields.');
  h = await startTestHarness({ dataDir: join(root, 'data'), script: { toolCalls, reply } });
});

after(async () => {
  await h?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('skills', () => {
  it('the model is offered the skill tool listing names and descriptions only, and reads the body through it', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'please use the pdf skill');
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(task.status?.message), `tool said: ${BODY}`);
    const asked = h.chatRequests().find((body) => JSON.stringify(body.messages).includes('please use the pdf skill'));
    const tool = asked?.tools?.find((t: any) => t.function?.name === 'skill');
    assert.ok(tool, 'the skill tool is offered');
    assert.match(tool.function.description, /- pdf: Fill in PDF forms/);
    assert.ok(!JSON.stringify(asked).includes(BODY), 'the body is not sent before the model asks for it');
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    assert.ok(
      card.capabilities.extensions.some((e: any) => e.uri === TOOL_CALLS_EXTENSION_URI),
      'with skills and no MCP server, the card declares the tool-calls extension',
    );
    const call = toolCallsOf(task.history.flatMap((m) => m.parts)).find((c) => c.tool === 'skill');
    assert.equal(call?.server, 'skills', 'the call is reported like any tool call');
  });

  it("TOOL-6: the model reads a skill's file, and a path out of the skill is refused", async () => {
    const client = await h.client('JSONRPC');
    const forms = await send(client, 'please read the forms file');
    assert.equal(textOf(forms.status?.message), 'tool said: Form W-9 has eight fields.');
    const escape = await send(client, 'please escape the skill');
    const said = textOf(escape.status?.message);
    assert.match(said, /leads out of the skill's folder/);
    assert.ok(!said.includes('the secret'));
  });

  it('/skills lists the skills with their descriptions', async () => {
    const client = await h.client('JSONRPC');
    const listed = await send(client, '/skills');
    assert.match(textOf(listed.status?.message), /\/pdf: Fill in PDF forms/);
    assert.deepEqual(dataOf(listed.status?.message), {
      skills: [{ name: 'pdf', description: 'Fill in PDF forms' }],
      skipped: [],
    });
  });

  it('/tools lists the skill tool under the server "skills", with skills and no other tool', async () => {
    const client = await h.client('JSONRPC');
    const listed = await send(client, '/tools');
    const lines = textOf(listed.status?.message).split('\n');
    assert.equal(lines[0], 'skills: connected, 1 tool');
    assert.match(lines[1]!, /^ {2}skill - Reads a skill: instructions for a kind of work\./);
    assert.deepEqual(
      (dataOf(listed.status?.message) as any).servers.map((s: any) => [
        s.name,
        s.tools.map((t: any) => [t.name, t.asks]),
      ]),
      [['skills', [['skill', false]]]],
    );
  });

  it('CMD-38: /<skill-name> args puts the skill body with the arguments in a turn of the same task', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'Hi');
    const replied = await send(client, '/pdf invoice.pdf', { taskId: parent.id });
    assert.equal(replied.status!.message!.metadata!.task_ref, undefined, 'no sub-task');
    assert.match(textOf(replied.status?.message), /^\/pdf started/);
    const prompt = `${BODY}\n\nARGUMENTS: invoice.pdf`;
    const task = await poll('the skill turn ended', async () => {
      const now = await client.getTask({ tenant: '', id: parent.id, historyLength: undefined });
      return textOf(now.history.at(-1)) === 'plain answer' && now.history.some((m) => textOf(m) === prompt)
        ? now
        : undefined;
    });
    assert.deepEqual(task.history.find((m) => textOf(m) === prompt)?.metadata?.[FROM_COMMAND_KEY], { command: '/pdf' });
  });
});
