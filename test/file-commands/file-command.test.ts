import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CommandRegistry, CommandUsageError } from '../../src/commands/index.js';
import { HarnessError } from '../../src/errors.js';
import { fileCommandDefinition, MAX_PROMPT_CHARS, type FileCommand } from '../../src/file-commands/index.js';
import { invoke, parentTask, RecordingStarter, recordingLogger } from './support.js';

const review: FileCommand = {
  name: 'review',
  path: '/somewhere/commands/review.md',
  fileName: 'review.md',
  description: 'Review a file for bugs',
  argumentHint: '<file> [focus]',
  model: 'builtin:stats',
  context: 'fork',
  template: 'Review $1 carefully, focusing on [$2].\nAll of it: $ARGUMENTS',
};

function registryWith(command: FileCommand, starter: RecordingStarter): CommandRegistry {
  const registry = new CommandRegistry();
  registry.register(fileCommandDefinition(command, starter));
  return registry;
}

describe('running a file command', () => {
  it('CMD-38: without "context", the expanded prompt runs inline: the reply says it started, the turn follows it', async () => {
    const starter = new RecordingStarter();
    const { context: _context, ...inline } = review;
    const registry = registryWith({ ...inline, allowedTools: ['fs_read_text_file'] }, starter);
    const task = parentTask();
    const result = await invoke(registry, 'review', 'src/a.ts leaks', task);
    assert.equal(starter.calls.length, 0, 'no sub-task');
    const turn = starter.turns[0]!;
    assert.equal(turn.task, task);
    assert.equal(turn.prompt, 'Review src/a.ts carefully, focusing on [leaks].\nAll of it: src/a.ts leaks');
    assert.equal(turn.options.label, '/review');
    assert.equal(turn.options.model, 'builtin:stats');
    assert.deepEqual(turn.options.allowedTools, ['fs_read_text_file']);
    assert.equal(turn.options.message.messageId, 'm-1', 'the command message, whose while-busy applies');
    assert.equal(result.taskRef, undefined);
    assert.deepEqual(result.data, { inline: 'started' });
    assert.ok(result.followUp);
    assert.match(result.text, /^\/review started: its prompt runs here on builtin:stats, as a turn of this task\.$/);

    starter.busy = true;
    const busy = await invoke(registry, 'review', 'b.ts', task);
    assert.deepEqual(busy.data, { inline: 'busy' });
    assert.equal(busy.followUp, undefined, 'nothing starts');
    assert.match(busy.text, /A turn is running on this task, so \/review started nothing/);
  });

  it('starts a sub-task with the expanded prompt, the model and the label, and replies at once with taskRef', async () => {
    const starter = new RecordingStarter();
    const registry = registryWith(review, starter);
    assert.equal(registry.get('review')?.description, 'Review a file for bugs');
    assert.equal(registry.get('review')?.argumentHint, '<file> [focus]');

    const task = parentTask();
    const result = await invoke(registry, 'review', 'src/a.ts leaks', task);
    assert.equal(starter.calls.length, 1);
    const call = starter.calls[0]!;
    assert.equal(call.parent, task);
    assert.equal(call.instruction, 'Review src/a.ts carefully, focusing on [leaks].\nAll of it: src/a.ts leaks');
    assert.equal(call.options.model, 'builtin:stats');
    assert.equal(call.options.label, '/review');
    assert.ok(call.options.callContext, 'the call context is passed on');

    assert.equal(result.taskRef, 'sub-1');
    assert.deepEqual(result.data, { taskId: 'sub-1' });
    assert.match(result.text, /^Started sub-task sub-1 for \/review on builtin:stats\./);
    assert.doesNotMatch(
      result.text,
      /SubscribeToTask|GetTask|CancelTask/,
      'a reply meant for a person names no protocol method',
    );
  });

  it("without a model in the file, no model is passed: the sub-task runs on the parent's", async () => {
    const starter = new RecordingStarter();
    const { model: _model, argumentHint: _hint, ...plain } = review;
    const registry = registryWith({ ...plain, name: 'plain' }, starter);
    assert.equal(registry.get('plain')?.argumentHint, '');
    const result = await invoke(registry, 'plain', '');
    assert.equal('model' in starter.calls[0]!.options, false);
    assert.equal(starter.calls[0]!.instruction, 'Review  carefully, focusing on [].\nAll of it: ');
    assert.match(result.text, /^Started sub-task sub-1 for \/plain\. /);
  });

  it('model_unknown from the starter becomes a usage reply naming the command, the model and the file, inline and forked', async () => {
    const starter = new RecordingStarter();
    starter.failWith = new HarnessError('model_unknown', 'The model "builtin:stats" is not offered.');
    const { context: _context, ...inline } = review;
    for (const command of [review, inline]) {
      const registry = registryWith(command, starter);
      await assert.rejects(invoke(registry, 'review', 'a.ts'), (error: Error) => {
        assert.ok(error instanceof CommandUsageError, `a usage error, not ${error.name}`);
        assert.match(error.message, /\/review asks for the model "builtin:stats"/);
        assert.match(error.message, /review\.md/);
        assert.match(error.message, /Change or remove that line in the file/);
        assert.doesNotMatch(error.message, /\/somewhere/, 'no path reaches the client');
        return true;
      });
    }
  });

  it('any other failure of the starter is left to the generic handler-error path', async () => {
    const starter = new RecordingStarter();
    starter.failWith = new HarnessError('store_failed', 'disk full');
    const registry = registryWith(review, starter);
    await assert.rejects(
      invoke(registry, 'review', 'a.ts'),
      (error: Error) => error instanceof HarnessError && error.code === 'store_failed',
    );
  });

  it('CMD-12: a prompt that would pass the limit is refused in the conversation and logged naming the file, never the arguments', async () => {
    const starter = new RecordingStarter();
    const log = recordingLogger();
    const repeated: FileCommand = {
      ...review,
      name: 'repeat',
      fileName: 'repeat.md',
      template: Array.from({ length: 20 }, () => '$ARGUMENTS').join('\n'),
    };
    const registry = new CommandRegistry();
    registry.register(fileCommandDefinition(repeated, starter, log));

    // 20 × 10,000 characters plus 19 line breaks: just over the limit.
    const args = 'secret-'.padEnd(10_000, 'y');
    const expected = 20 * args.length + 19;
    assert.ok(expected > MAX_PROMPT_CHARS);
    await assert.rejects(invoke(registry, 'repeat', args), (error: Error) => {
      assert.ok(error instanceof CommandUsageError, `a usage error, not ${error.name}`);
      assert.equal(
        error.message,
        `/repeat with these arguments would make a prompt of ${expected.toLocaleString('en-US')} characters, over the limit of 200,000: give shorter arguments.`,
      );
      return true;
    });
    assert.equal(starter.calls.length, 0, 'no sub-task is started');
    assert.deepEqual(log.lines, [
      `warn file command refused: its expanded prompt is over the limit {"command":"/repeat","file":"repeat.md","chars":${expected},"limit":${MAX_PROMPT_CHARS}}`,
    ]);

    // A prompt of the limit exactly runs; one character more does not.
    const plain = new CommandRegistry();
    plain.register(fileCommandDefinition({ ...repeated, name: 'plain', template: '$ARGUMENTS' }, starter, log));
    await invoke(plain, 'plain', 'x'.repeat(MAX_PROMPT_CHARS));
    assert.equal(starter.calls[0]!.instruction.length, MAX_PROMPT_CHARS);
    await assert.rejects(invoke(plain, 'plain', 'x'.repeat(MAX_PROMPT_CHARS + 1)), CommandUsageError);
  });
});
