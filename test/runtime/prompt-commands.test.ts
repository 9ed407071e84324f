/** MCP prompts as commands: the name rule, the argument hint, and `$ARGUMENTS` to the prompt's arguments. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CommandUsageError } from '../../src/commands/index.js';
import { argumentHintOf, commandNameOf, promptArguments } from '../../src/runtime/prompt-commands.js';

const review = {
  arguments: [
    { name: 'file', required: true },
    { name: 'focus', required: false },
  ],
};

describe('prompt commands', () => {
  it('a prompt name becomes a command name by the extension rule, or nothing', () => {
    assert.equal(commandNameOf('review'), 'review');
    assert.equal(commandNameOf('Summarize_Notes'), 'summarize-notes');
    assert.equal(commandNameOf('git.commit message'), 'git-commit-message');
    assert.equal(commandNameOf('2fa/Setup!'), 'fa-setup');
    assert.equal(commandNameOf('--x--'), 'x');
    assert.equal(commandNameOf('123'), undefined);
    assert.equal(commandNameOf('日本'), undefined);
  });

  it('the hint shows required arguments in <> and optional ones in []', () => {
    assert.equal(argumentHintOf(review), '<file> [focus]');
    assert.equal(argumentHintOf({ arguments: [] }), '');
  });

  it('$ARGUMENTS go one word to each argument, the last taking the rest; a missing required one is named', () => {
    assert.deepEqual(promptArguments(review, 'a.ts names and tests'), { file: 'a.ts', focus: 'names and tests' });
    assert.deepEqual(promptArguments(review, 'a.ts'), { file: 'a.ts' });
    assert.throws(
      () => promptArguments(review, '  '),
      (error: unknown) =>
        error instanceof CommandUsageError && /Missing argument: file\. Usage: <file> \[focus\]/.test(error.message),
    );
    assert.deepEqual(promptArguments({ arguments: [] }, 'ignored'), {});
  });
});
