/** MCP prompts as commands: the name rule, the argument hint, and `$ARGUMENTS` to the prompt's arguments. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CommandRegistry, CommandUsageError } from '../../src/commands/index.js';
import { configSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { argumentHintOf, commandNameOf, PromptCommands, promptArguments } from '../../src/runtime/prompt-commands.js';

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

describe('issue 38: an MCP server offered to signed-in callers only', () => {
  it("issue 38: its prompts' commands are offered to signed-in callers only; commands.visibility decides over it", () => {
    const config = configSchema.parse({
      mcpServers: {
        ops: { url: 'http://127.0.0.1:1/mcp', visibility: 'authenticated' },
        docs: { url: 'http://127.0.0.1:2/mcp' },
      },
      commands: { visibility: { restart: 'public' } },
    });
    const registry = new CommandRegistry({ visibility: (command) => config.commands.visibility[command.name] });
    const prompt = (server: string, name: string) => ({ server, name, description: '', arguments: [] });
    new PromptCommands({
      registry,
      source: {
        prompts: () => [prompt('ops', 'deploy'), prompt('ops', 'restart'), prompt('docs', 'explain')],
        getPrompt: async () => '',
        onPromptsChanged: () => {},
      },
      starter: { start: async () => 'never' } as never,
      log: silentLogger,
      visibility: (server) => config.mcpServers[server]?.visibility,
    }).start();
    assert.deepEqual(
      registry.offeredTo(false).map((c) => c.name),
      ['restart', 'explain'],
    );
    assert.deepEqual(
      registry.offeredTo(true).map((c) => c.name),
      ['deploy', 'restart', 'explain'],
    );
  });
});
