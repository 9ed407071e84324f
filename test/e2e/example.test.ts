import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rollCommand } from '../../examples/custom-command.js';
import { dataOf, send, startTestHarness, textOf, type TestHarness, commandsEntry } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ harness: { commands: (registry) => registry.register(rollCommand) } });
});

after(async () => {
  await h?.close();
});

describe('the example command of docs/embedding.md', () => {
  it('is registered after the built-ins, answers, and explains a bad argument', async () => {
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    assert.deepEqual(commandsEntry(card).params.commands.at(-1), {
      name: 'roll',
      description: 'Roll a die on the harness',
      argument_hint: '[<sides>]',
    });
    const client = await h.client('JSONRPC');
    const rolled = await send(client, '/roll 20');
    const { sides, value } = dataOf(rolled.status?.message);
    assert.equal(sides, 20);
    assert.ok(value >= 1 && value <= 20);
    assert.equal(textOf(rolled.status?.message), `You rolled ${value} (d20).`);
    const bad = await send(client, '/roll many', { taskId: rolled.id });
    assert.match(textOf(bad.status?.message), /not a number of sides/);
    assert.equal(h.chatRequests().length, 0, 'the model was never asked');
  });
});
