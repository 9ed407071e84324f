import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { COMMAND_ARGUMENTS_EXTENSION_URI } from '../../src/wire.js';
import { dataOf, send, startTestHarness, textOf, type TestHarness } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: { small: 'small says hi', large: 'large says hi' } } });
});

after(async () => {
  await h?.close();
});

describe('the built-in model command', () => {
  it('CMD-20: /model alone shows the current model and the choices, the current one marked', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'Hi');
    const replied = await send(client, '/model', { taskId: task.id });
    const text = textOf(replied.status?.message);
    assert.match(text, /This task uses fixture:small/);
    assert.match(text, /^\* fixture:small/m);
    assert.match(text, /^ {2}fixture:large/m);
    assert.match(text, /^ {2}builtin:echo/m);
    const data = dataOf(replied.status?.message);
    assert.equal(data.current, 'fixture:small');
    assert.deepEqual(
      data.models.filter((m: any) => m.current).map((m: any) => m.id),
      ['fixture:small'],
    );
  });

  it('/model takes a model without its provider when one offered model has that name; the card lists the models for completion', async () => {
    const client = await h.client('GRPC');
    const task = await send(client, 'Hi');
    const replied = await send(client, '/model echo', { taskId: task.id });
    assert.equal(dataOf(replied.status?.message).current, 'builtin:echo');
    const card = await client.getAgentCard();
    const entry = card.capabilities?.extensions?.find((e) => e.uri === COMMAND_ARGUMENTS_EXTENSION_URI);
    const model = (entry?.params?.arguments as any[]).find((a) => a.command === 'model');
    assert.equal(model.position, 0);
    const offered = dataOf(replied.status?.message).models.map((m: any) => m.id);
    assert.deepEqual(
      model.values.map((v: any) => v.value),
      offered,
      'every offered model, in the order /model lists them',
    );
    const help = (entry?.params?.arguments as any[]).find((a) => a.command === 'help');
    assert.ok(
      help.values.some((v: any) => v.value === 'model'),
      '/help completes the command names',
    );
  });

  it('CMD-21: /model <id> sets the task model and the next model request goes to it', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'Hi');
    assert.equal(h.chatRequests().at(-1).model, 'small');
    const replied = await send(client, '/model fixture:large', { taskId: task.id });
    assert.equal(replied.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = await send(client, 'Again', { taskId: task.id });
    assert.equal(h.chatRequests().at(-1).model, 'large');
    assert.equal(textOf(answered.status?.message), 'large says hi');
    const status = await send(client, '/status', { taskId: task.id });
    const usage = dataOf(status.status?.message).usage.map((u: any) => u.model);
    assert.deepEqual(usage, ['fixture:small', 'fixture:large']);
  });

  it('CMD-21: an unknown id changes nothing and the reply lists the choices', async () => {
    const client = await h.client('GRPC');
    const task = await send(client, 'Hi');
    const replied = await send(client, '/model fixture:huge', { taskId: task.id });
    assert.match(textOf(replied.status?.message), /Unknown model "fixture:huge"/);
    assert.match(textOf(replied.status?.message), /fixture:large/);
    await send(client, 'Still small?', { taskId: task.id });
    assert.equal(h.chatRequests().at(-1).model, 'small');
  });

  it('CMD-22: a new task in a context starts with the model last chosen in that context', async () => {
    const client = await h.client('JSONRPC');
    const first = await send(client, 'Hi');
    await send(client, '/model fixture:large', { taskId: first.id });
    await send(client, 'A new task, same context', { contextId: first.contextId });
    assert.equal(h.chatRequests().at(-1).model, 'large');
    await send(client, 'A new context');
    assert.equal(h.chatRequests().at(-1).model, 'small');
  });
});
