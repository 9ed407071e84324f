import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandFile, type CommandFileParse } from '../../src/file-commands/index.js';
import { commandFile } from './support.js';

function reasons(parse: CommandFileParse): string[] {
  assert.equal(parse.ok, false, 'the file was refused');
  return parse.ok ? [] : parse.reasons;
}

function fails(text: string, ...expected: RegExp[]): void {
  const found = reasons(parseCommandFile(text));
  assert.equal(found.length, expected.length, `reasons: ${JSON.stringify(found)}`);
  expected.forEach((pattern, index) => assert.match(found[index]!, pattern));
}

describe('command file front matter', () => {
  it('reads description, argument-hint, model and the trimmed body', () => {
    const text = commandFile(
      ['description: Review a file for bugs', 'argument-hint: <file> [focus]', 'model: builtin:stats'],
      '\n\nReview $1 carefully.\n\nThen $2.\n\n',
    );
    assert.deepEqual(parseCommandFile(text), {
      ok: true,
      content: {
        description: 'Review a file for bugs',
        argumentHint: '<file> [focus]',
        model: 'builtin:stats',
        template: 'Review $1 carefully.\n\nThen $2.',
      },
    });
  });

  it('optional keys may be left out or left empty; CRLF and a byte-order mark are fine', () => {
    assert.deepEqual(parseCommandFile(commandFile(['description: Just this'], 'Go.')), {
      ok: true,
      content: { description: 'Just this', template: 'Go.' },
    });
    const crlf =
      '\uFEFF---\r\ndescription: "Quoted: with a colon"\r\nmodel:\r\nargument-hint: ""\r\n---\r\nline 1\r\nline 2\r\n';
    assert.deepEqual(parseCommandFile(crlf), {
      ok: true,
      content: { description: 'Quoted: with a colon', template: 'line 1\nline 2' },
    });
  });

  it('a model id may hold more colons after the provider', () => {
    const parse = parseCommandFile(commandFile(['description: d', 'model: local:llama3.2:3b']));
    assert.equal(parse.ok && parse.content.model, 'local:llama3.2:3b');
  });

  it('a description left out or empty is the first line of the prompt, cut short (as Claude Code files often have none); a non-string one fails', () => {
    const parsed = parseCommandFile(commandFile(['argument-hint: x'], '# Review the diff\n\nCarefully.'));
    assert.ok(parsed.ok);
    assert.equal(parsed.content.description, 'Review the diff');
    const empty = parseCommandFile(commandFile(['description:'], `${'long '.repeat(40)}`));
    assert.ok(empty.ok && empty.content.description.length === 80 && empty.content.description.endsWith('…'));
    fails(commandFile(['description: 42']), /"description" must be a string, not the number 42 \(quote the value/);
  });

  it("an unknown key fails, naming the key; Claude Code's disable-model-invocation is accepted", () => {
    fails(
      commandFile(['description: d', 'modle: builtin:stats']),
      /unknown front-matter key "modle" \(the keys are description, argument-hint, model, allowed-tools, context and disable-model-invocation\)/,
    );
    fails(commandFile(['description: d', 'a: 1', 'b: 2']), /unknown front-matter keys "a", "b"/);
    assert.ok(parseCommandFile(commandFile(['description: d', 'disable-model-invocation: true'])).ok);
  });

  it('wrong types fail, each named; a model may be named without its provider', () => {
    fails(
      commandFile(['description: d', 'argument-hint: [file]']),
      /"argument-hint" must be a string, not a list \(quote the value/,
    );
    fails(commandFile(['description: d', 'model: 7']), /"model" must be a string, not the number 7/);
    const bare = parseCommandFile(commandFile(['description: d', 'model: claude-haiku-4-5']));
    assert.ok(bare.ok && bare.content.model === 'claude-haiku-4-5');
  });

  it('a YAML error names the line and column in the file', () => {
    fails(commandFile(['description: Review: the file']), /not valid YAML \(line 2, column \d+\): Nested mappings/);
    fails(
      commandFile(['description: d', 'description: e']),
      /not valid YAML \(line 3, column 1\): Map keys must be unique/,
    );
    fails(commandFile(['description: "unclosed']), /not valid YAML \(line 2, column \d+\)/);
    fails(commandFile(['description: d', 'model: *nowhere']), /not valid YAML/);
  });

  it('a file without front matter is all prompt (Claude Code files as they are); unclosed or non-mapping front matter fails', () => {
    assert.deepEqual(parseCommandFile('Review $1\n'), {
      ok: true,
      content: { description: 'Review', template: 'Review $1' },
    });
    assert.deepEqual(parseCommandFile('\n---\ndescription: d\n---\nbody\n'), {
      ok: true,
      content: { description: 'description: d', template: '---\ndescription: d\n---\nbody' },
    });
    fails('---\ndescription: d\nbody\n', /front matter is not closed/);
    assert.deepEqual(parseCommandFile('---\n---\nbody\n'), {
      ok: true,
      content: { description: 'body', template: 'body' },
    });
    fails('---\n- description\n---\nbody\n', /must be "key: value" lines, not a list/);
    fails('   \n', /the file is empty/);
  });

  it('an empty body fails', () => {
    fails(commandFile(['description: d'], '  \n\n  '), /the prompt is empty/);
    fails('---\ndescription: d\n---', /the prompt is empty/);
  });
});

describe('how a command file runs (CMD-38)', () => {
  it('CMD-38: inline without "context"; "fork" and "none" run a sub-task; "conversation" says what to write now', () => {
    const contextOf = (value?: string) => {
      const parsed = parseCommandFile(commandFile(['description: d', ...(value ? [`context: ${value}`] : [])]));
      assert.ok(parsed.ok, JSON.stringify(parsed));
      return parsed.content.context;
    };
    assert.equal(contextOf(), undefined);
    assert.equal(contextOf('inline'), undefined);
    assert.equal(contextOf('fork'), 'fork');
    assert.equal(contextOf('none'), 'none');
    fails(
      commandFile(['description: d', 'context: conversation']),
      /write "fork" for a sub-task that is sent the conversation/,
    );
    fails(commandFile(['description: d', 'context: other']), /"context" must be "inline" .*"fork" .*"none"/);
  });

  it('CMD-38: without a description, the first line with words left once placeholders and markers are out, never a raw template line', () => {
    const described = (body: string) => {
      const parsed = parseCommandFile(body);
      assert.ok(parsed.ok, JSON.stringify(parsed));
      return parsed.content.description;
    };
    assert.equal(described('## Review $1, focusing on $2.\n'), 'Review, focusing on.');
    assert.equal(
      described('!`git status`\n\nSummarise @notes/todo.md for me@example.com: $ARGUMENTS\n'),
      'Summarise for me@example.com',
    );
    assert.equal(described('$ARGUMENTS\n'), '', 'nothing left: the loader names the file instead');
  });
});

describe('allowed-tools in the front matter (TOOL-3)', () => {
  it('TOOL-3: a list, or one line of names separated by commas as Claude Code writes it', () => {
    const list = parseCommandFile(
      ['---', 'description: d', 'allowed-tools:', '  - fs_read_text_file', '  - "web:*"', '---', 'body'].join('\n'),
    );
    assert.ok(list.ok);
    assert.deepEqual(list.content.allowedTools, ['fs_read_text_file', 'web:*']);
    const line = parseCommandFile(
      ['---', 'description: d', 'allowed-tools: fs_read_text_file, web:*', '---', 'body'].join('\n'),
    );
    assert.ok(line.ok);
    assert.deepEqual(line.content.allowedTools, ['fs_read_text_file', 'web:*']);
    const none = parseCommandFile(['---', 'description: d', '---', 'body'].join('\n'));
    assert.ok(none.ok);
    assert.equal(none.content.allowedTools, undefined, 'absent: every tool');
  });

  it('TOOL-3: a value of another type is refused, saying what is expected', () => {
    const parsed = parseCommandFile(['---', 'description: d', 'allowed-tools: 3', '---', 'body'].join('\n'));
    assert.ok(!parsed.ok);
    assert.match(parsed.reasons.join('\n'), /"allowed-tools" must be a list of tool names/);
  });
});

describe('Claude Code command files, as they are', () => {
  it('the example of docs/commands.md loads unchanged: its allowed-tools line read as a list', () => {
    const text = [
      '---',
      'allowed-tools: Bash(git diff:*), fs_read_text_file',
      'description: Review the staged changes',
      '---',
      'Review the staged changes for bugs and unclear names. Focus on: $ARGUMENTS',
      '',
    ].join('\n');
    const parsed = parseCommandFile(text);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.content.allowedTools, ['Bash(git diff:*)', 'fs_read_text_file']);
    assert.equal(parsed.content.description, 'Review the staged changes');
  });
});
