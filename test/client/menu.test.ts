/**
 * What the chat shows under its prompt and how it wraps its own lines: the slash menu for what
 * is typed, the chat's own commands next to the agent's, and word wrapping.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chatActionOf, offeredCommands } from '../../src/client/chat-commands.js';
import { commandMenu, tabCompletion } from '../../src/client/completion.js';
import type { CardCommand } from '../../src/client/connect.js';
import { columnsOf, fit, wrapWords } from '../../src/client/text-width.js';

const COMMANDS: CardCommand[] = [
  { name: 'help', description: 'List the commands', argumentHint: '[<command>]' },
  {
    name: 'model',
    description: 'Show or choose the model',
    argumentHint: '[<model>]',
    argumentValues: [
      [
        { value: 'builtin:echo', description: 'repeats' },
        { value: 'builtin:stats', description: 'counts' },
      ],
    ],
  },
  { name: 'status', description: "Show this task's state", argumentHint: '' },
];

describe('the slash menu', () => {
  it('lists the commands a name being typed matches, then the values of the argument being typed', () => {
    assert.deepEqual(commandMenu('/s', COMMANDS), ["/status — Show this task's state"]);
    assert.equal(commandMenu('/', COMMANDS).length, 3);
    assert.deepEqual(commandMenu('/model b', COMMANDS), ['builtin:echo — repeats', 'builtin:stats — counts']);
    assert.deepEqual(commandMenu('/status x', COMMANDS), ["/status — Show this task's state"], 'the hint stays');
    assert.deepEqual(commandMenu('hello /s', COMMANDS), [], 'not a command');
    assert.deepEqual(commandMenu('/s\nmore', COMMANDS), [], 'a message of several lines is not a command');
  });

  it('is at most eight lines, saying how many more match', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ name: `c${i}`, description: '', argumentHint: '' }));
    const menu = commandMenu('/c', many);
    assert.equal(menu.length, 8);
    assert.equal(menu.at(-1), '… 5 more (type to narrow)');
  });

  it('Tab completes a unique prefix, and nothing when several commands share it', () => {
    assert.equal(tabCompletion('/mo', COMMANDS), '/model ');
    assert.equal(tabCompletion('/model builtin:e', COMMANDS), '/model builtin:echo ');
    assert.equal(tabCompletion('/model builtin:', COMMANDS), undefined);
  });

  it("offers the chat's own commands after the agent's; /help is the chat's only when the agent has none", () => {
    assert.deepEqual(
      offeredCommands(COMMANDS).map((c) => c.name),
      ['help', 'model', 'status', 'clear', 'new', 'exit'],
    );
    assert.deepEqual(
      offeredCommands([]).map((c) => c.name),
      ['clear', 'new', 'exit', 'help'],
    );
    assert.equal(chatActionOf('/clear', COMMANDS), 'clear');
    assert.equal(chatActionOf('/new ', COMMANDS), 'clear');
    assert.equal(chatActionOf('/exit', COMMANDS), 'exit');
    assert.equal(chatActionOf('/help', COMMANDS), undefined, "the agent's /help");
    assert.equal(chatActionOf('/help', []), 'help');
    assert.equal(chatActionOf('/exit now', COMMANDS), undefined, 'the chat commands take no arguments');
  });
});

describe('word wrapping', () => {
  it('/tools lines wrap at word boundaries to the width, never inside a word', () => {
    const text = '[/tools] fs_read_text_file — Read the complete contents of a file as text from the file system';
    const wrapped = wrapWords(text, 30);
    assert.ok(
      wrapped.every((line) => line.length <= 30),
      wrapped.join('\n'),
    );
    assert.equal(wrapped.join(' '), text, 'only spaces were turned into line breaks');
    assert.deepEqual(wrapWords('a\nb', 30), ['a', 'b'], 'line breaks kept');
    assert.deepEqual(
      wrapWords('x'.repeat(25), 10),
      ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)],
      'a long word is cut',
    );
  });

  it('counts the columns a character takes on screen: two for CJK and emoji, none for a style', () => {
    const wrapped = wrapWords('日本語の 文章を 折り返す 😀😀 end', 10);
    assert.ok(
      wrapped.every((line) => columnsOf(line) <= 10),
      wrapped.join('\n'),
    );
    assert.deepEqual(wrapped, ['日本語の', '文章を', '折り返す', '😀😀 end']);
    assert.equal(columnsOf('\x1b[2m你好\x1b[0m'), 4);
    assert.equal(fit('你好世界', 5), '你好…', 'cut to five columns, the ellipsis one of them');
    assert.equal(fit('abc', 5), 'abc');
  });
});
