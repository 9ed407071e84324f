import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CommandUsageError, type CommandDefinition } from '@tiny-harness/commands-extension';
import { contextCommand } from '../../src/commands/builtins/context.js';
import { forkCommand } from '../../src/commands/builtins/fork.js';
import type { ContextReport, ForkOutcome } from '../../src/commands/index.js';
import { REPLY_ERROR_KEY } from '../../src/wire.js';

const run = (command: CommandDefinition, args = '') =>
  Promise.resolve(
    command.handler({ name: command.name, args, task: {} as any, message: {} as any, callContext: {} as any }),
  );

describe('/fork', () => {
  it('CMD-37: passes the point on, and replies with the new task as task_ref and data', async () => {
    const asked: Array<number | undefined> = [];
    const command = forkCommand({
      fork: async (_task, n) => {
        asked.push(n);
        return { taskId: 'fork-id', contextId: 'fork-context', messages: 3 };
      },
    });
    const whole = await run(command);
    assert.equal(whole.taskRef, 'fork-id');
    assert.deepEqual(whole.data, { taskId: 'fork-id', contextId: 'fork-context', messages: 3 });
    assert.match(whole.text, /Forked this conversation into task fork-id \(3 messages copied\)/);
    await run(command, '2');
    assert.deepEqual(asked, [undefined, 2]);
  });

  it('CMD-37: a point that is not a whole number from 1 is a usage error, and nothing is forked', async () => {
    const command = forkCommand({ fork: async () => assert.fail('nothing is forked') });
    for (const args of ['0', '-1', '1.5', 'two', '2 3'])
      await assert.rejects(run(command, args), (error: unknown) => error instanceof CommandUsageError, args);
  });

  it('CMD-37: a refusal says why, with its code, and no task_ref', async () => {
    const outcomes: Array<[ForkOutcome, RegExp]> = [
      [{ refused: 'turn_running' }, /A turn is running/],
      [{ refused: 'no_such_point', points: 2 }, /no point 5 .* 2 messages of yours/],
      [{ refused: 'nothing_to_fork' }, /Nothing to fork/],
    ];
    for (const [outcome, text] of outcomes) {
      const reply = await run(forkCommand({ fork: async () => outcome }), '5');
      assert.match(reply.text, text);
      assert.equal(reply.taskRef, undefined);
      assert.equal(reply.data?.[REPLY_ERROR_KEY], (outcome as { refused: string }).refused);
    }
  });
});

describe('/context', () => {
  const report: ContextReport = {
    model: 'p:m',
    budgetChars: 200_000,
    usedChars: 61_234,
    share: 61_234 / 200_000,
    parts: { systemPrompt: 1200, instructions: 0, tools: 4034, summary: 0, history: 56_000 },
  };

  it('shows each part, the total against the budget as a percentage and a bar of 20 cells, and the data as reported', async () => {
    const reply = await run(contextCommand({ report: async () => report }));
    assert.deepEqual(reply.data, { ...report });
    assert.match(reply.text, /^The next turn would send p:m:/);
    assert.match(reply.text, /system prompt: +1,200 characters/);
    assert.match(reply.text, /tool definitions: +4,034 characters/);
    assert.match(reply.text, /history: +56,000 characters/);
    assert.match(reply.text, /61,234 of the model's 200,000 characters \(31%\) \[#{6}\.{14}\]/);
    assert.doesNotMatch(reply.text, /tokens/, 'no count known');
  });

  it('says the provider’s count of the last turn’s input tokens when known; a full budget fills the bar', async () => {
    const full = { ...report, usedChars: 250_000, share: 1, tokens: { input: 15_000, model: 'p:m' } };
    const reply = await run(contextCommand({ report: async () => full }));
    assert.match(reply.text, /\(125%\) \[#{20}\]/);
    assert.match(reply.text, /last turn's input was 15,000 tokens, as p:m counted them/);
  });
});
