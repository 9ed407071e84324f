/**
 * The page's command completion without a browser: the commands read from the card, filtering
 * by prefix in the card's order, keyboard movement, picking and closing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS_EXTENSION_URI as SERVER_URI } from '../../src/commands/index.js';
import { COMMAND_ARGUMENTS_EXTENSION_URI, COMMANDS_EXTENSION_URI } from '../../src/wire.js';
import { Completion, commandsFromCard, type CommandInfo } from '../../web/src/completion.js';

const command = (name: string, argumentHint = '', description = `does ${name}`): CommandInfo => ({
  name,
  description,
  argumentHint,
});

function card(commands: unknown, uri = COMMANDS_EXTENSION_URI): unknown {
  return {
    name: 'agent',
    capabilities: {
      streaming: true,
      extensions: [
        {
          uri: 'https://example.test/other',
          params: { commands: [{ name: 'decoy', description: 'not ours', argument_hint: '' }] },
        },
        { uri, required: false, params: { commands } },
      ],
    },
  };
}

/** A card's commands in a deliberately non-alphabetical order. */
const COMMANDS = [
  command('status'),
  command('model', '[<model>]'),
  command('spawn', '<instruction>'),
  command('help', '[<command>]'),
  command('summary'),
];

function typed(text: string, commands: readonly CommandInfo[] = COMMANDS): Completion {
  const completion = new Completion(commands);
  completion.update(text);
  return completion;
}

const names = (completion: Completion) => completion.items.map((c) => c.name);

describe('the commands on the card', () => {
  it('uses the same extension URI as the server', () => {
    assert.equal(COMMANDS_EXTENSION_URI, SERVER_URI);
  });

  it('reads name, description and argument hint from the extension params, in the card order', () => {
    const found = commandsFromCard(
      card([
        { name: 'model', description: "Show or choose this task's model", argument_hint: '[<model>]' },
        { name: 'help', description: 'List the commands', argument_hint: '[<command>]' },
        { name: 'status', description: 'Show the state', argument_hint: '' },
      ]),
    );
    assert.deepEqual(found, [
      { name: 'model', description: "Show or choose this task's model", argumentHint: '[<model>]' },
      { name: 'help', description: 'List the commands', argumentHint: '[<command>]' },
      { name: 'status', description: 'Show the state', argumentHint: '' },
    ]);
  });

  it('skips malformed entries and fills in what is missing', () => {
    const found = commandsFromCard(
      card([
        null,
        'model',
        { description: 'no name' },
        { name: '' },
        { name: 'ok' },
        { name: 'hinted', argument_hint: 7 },
      ]),
    );
    assert.deepEqual(found, [command('ok', '', ''), command('hinted', '', '')]);
  });

  it('a card without the extension, or with a malformed one, offers no commands', () => {
    assert.deepEqual(commandsFromCard({ name: 'agent', capabilities: { extensions: [] } }), []);
    assert.deepEqual(commandsFromCard({ name: 'agent', capabilities: {} }), []);
    assert.deepEqual(commandsFromCard({ name: 'agent' }), []);
    assert.deepEqual(commandsFromCard(card([{ name: 'model' }], 'https://example.test/commands/v2')), []);
    assert.deepEqual(commandsFromCard(card('not a list')), []);
    assert.deepEqual(commandsFromCard(null), []);
    assert.deepEqual(commandsFromCard('card'), []);
  });

  it('a card without the extension gives no list, whatever is typed', () => {
    const completion = typed(
      '/',
      commandsFromCard({ name: 'agent', capabilities: { extensions: [{ uri: 'https://example.test/other' }] } }),
    );
    assert.equal(completion.isOpen, false);
    assert.deepEqual(completion.items, []);
    assert.deepEqual(completion.key('Enter'), { handled: false });
    assert.deepEqual(completion.key('Tab'), { handled: false });
  });
});

describe('filtering', () => {
  it('a lone / lists every command in the card order', () => {
    assert.deepEqual(names(typed('/')), ['status', 'model', 'spawn', 'help', 'summary']);
  });

  it('keeps the commands whose name starts with what follows the /, in the card order', () => {
    assert.deepEqual(names(typed('/mo')), ['model']);
    assert.deepEqual(names(typed('/s')), ['status', 'spawn', 'summary']);
    assert.deepEqual(names(typed('/su')), ['summary']);
    assert.deepEqual(names(typed('/MO')), ['model'], 'case does not matter while filtering');
    assert.deepEqual(names(typed('/odel')), [], 'a prefix, not a substring');
  });

  it('is closed when nothing matches, without a leading /, and once arguments start', () => {
    for (const text of ['', 'mo', ' /mo', '/x', '/model ', '/model gpt', 'hello /mo', '/mo\n']) {
      const completion = typed(text);
      assert.equal(completion.isOpen, false, JSON.stringify(text));
      assert.deepEqual(completion.items, [], JSON.stringify(text));
    }
  });

  it('follows the text as it changes', () => {
    const completion = typed('/');
    completion.update('/h');
    assert.deepEqual(names(completion), ['help']);
    completion.update('/');
    assert.equal(completion.items.length, 5);
    completion.update('');
    assert.equal(completion.isOpen, false);
  });

  it('a new command list (the card changed) refilters what is typed', () => {
    const completion = typed('/s');
    completion.setCommands([command('search'), command('model')]);
    assert.deepEqual(names(completion), ['search']);
  });
});

describe('the keyboard', () => {
  it('arrows move the highlight and wrap around at both ends', () => {
    const completion = typed('/s'); // status, spawn, summary
    assert.equal(completion.activeItem?.name, 'status');
    assert.deepEqual(completion.key('ArrowDown'), { handled: true });
    assert.equal(completion.activeItem?.name, 'spawn');
    completion.key('ArrowDown');
    assert.equal(completion.activeItem?.name, 'summary');
    completion.key('ArrowDown');
    assert.equal(completion.activeItem?.name, 'status', 'down from the last goes to the first');
    assert.deepEqual(completion.key('ArrowUp'), { handled: true });
    assert.equal(completion.activeItem?.name, 'summary', 'up from the first goes to the last');
    completion.key('ArrowUp');
    assert.equal(completion.activeIndex, 1);
  });

  it('Tab picks the highlighted command: the input becomes "/name " and the list closes', () => {
    const completion = typed('/s');
    completion.key('ArrowDown');
    assert.deepEqual(completion.key('Tab'), { handled: true, text: '/spawn ' });
    assert.equal(completion.isOpen, false);
    assert.deepEqual(completion.key('Tab'), { handled: false }, 'closed: Tab is the browser’s again');
  });

  it('Enter picks the highlighted command too', () => {
    const completion = typed('/mo');
    assert.deepEqual(completion.key('Enter'), { handled: true, text: '/model ' });
    assert.equal(completion.isOpen, false);
    assert.deepEqual(completion.key('Enter'), { handled: false }, 'the next Enter sends');
  });

  it('Enter on a name typed out in full closes the list and leaves Enter to send', () => {
    const completion = typed('/status');
    assert.deepEqual(names(completion), ['status']);
    assert.deepEqual(completion.key('Enter'), { handled: false });
    assert.equal(completion.isOpen, false);
  });

  it('Escape closes the list until the text changes', () => {
    const completion = typed('/');
    assert.deepEqual(completion.key('Escape'), { handled: true });
    assert.equal(completion.isOpen, false);
    assert.deepEqual(completion.items, []);
    assert.deepEqual(completion.key('ArrowDown'), { handled: false });
    completion.update('/');
    assert.equal(completion.isOpen, false, 'the same text: still closed');
    completion.update('/m');
    assert.deepEqual(names(completion), ['model'], 'typing opens it again');
  });

  it('other keys are not the list’s', () => {
    const completion = typed('/');
    assert.deepEqual(completion.key('a'), { handled: false });
    assert.deepEqual(completion.key('Backspace'), { handled: false });
    assert.equal(completion.isOpen, true);
  });

  it('the highlighted command stays highlighted while it still matches', () => {
    const completion = typed('/');
    completion.key('ArrowDown'); // model
    completion.update('/m');
    assert.equal(completion.activeItem?.name, 'model');
    completion.update('/s');
    assert.equal(completion.activeItem?.name, 'status', 'gone from the list: back to the top');
  });

  it('pick(index) and highlight(index) serve the mouse', () => {
    const completion = typed('/');
    completion.highlight(3);
    assert.equal(completion.activeItem?.name, 'help');
    completion.highlight(99);
    assert.equal(completion.activeItem?.name, 'help', 'out of range: ignored');
    assert.equal(completion.pick(1), '/model ');
    assert.equal(completion.isOpen, false);
    assert.equal(completion.pick(0), undefined, 'nothing to pick while closed');
  });
});

describe('completing arguments (the command-arguments extension)', () => {
  const MODELS = [
    { value: 'builtin:echo', description: 'Says it back' },
    { value: 'fixture:small' },
    { value: 'fixture:large' },
  ];
  const withValues: CommandInfo[] = [{ ...command('model', '[<model>]'), argumentValues: [MODELS] }, command('status')];

  it('reads the values from the card beside the commands', () => {
    const found = commandsFromCard({
      name: 'agent',
      capabilities: {
        extensions: [
          {
            uri: COMMANDS_EXTENSION_URI,
            params: { commands: [{ name: 'model', description: 'd', argument_hint: '' }] },
          },
          {
            uri: COMMAND_ARGUMENTS_EXTENSION_URI,
            params: { arguments: [{ command: 'model', position: 0, values: MODELS }] },
          },
        ],
      },
    });
    assert.deepEqual(found[0]!.argumentValues, [MODELS]);
  });

  it('the list stays open after the name with the values; typing filters them, by the name after the provider too; Tab picks', () => {
    assert.deepEqual(names(typed('/model ', withValues)), ['builtin:echo', 'fixture:small', 'fixture:large']);
    assert.deepEqual(names(typed('/model fix', withValues)), ['fixture:small', 'fixture:large']);
    const echo = typed('/model echo', withValues);
    assert.deepEqual(names(echo), ['builtin:echo']);
    assert.deepEqual(echo.key('Tab'), { handled: true, text: '/model builtin:echo ' });
    assert.deepEqual(names(typed('/status x', withValues)), [], 'no values listed, no list');
  });

  it('issue 33: Enter on a value named after its provider, which one value alone has, sends the command as it is', () => {
    const large = typed('/model large', withValues);
    assert.deepEqual(names(large), ['fixture:large'], 'the list offers it');
    assert.deepEqual(large.key('Enter'), { handled: false }, 'Enter sends /model large at once');
    assert.equal(large.isOpen, false);
    const twice: CommandInfo[] = [
      { ...command('model'), argumentValues: [[{ value: 'a:fast' }, { value: 'b:fast' }]] },
    ];
    assert.deepEqual(
      typed('/model fast', twice).key('Enter'),
      { handled: true, text: '/model a:fast ' },
      'two providers offer it: Enter picks the highlighted one',
    );
  });

  it('issue 33: Enter on a value typed out in full sends it, even when a longer value is highlighted first; after the arrows, Enter picks', () => {
    const longerFirst: CommandInfo[] = [
      { ...command('model'), argumentValues: [[{ value: 'fixture:small-2' }, { value: 'fixture:small' }]] },
    ];
    const exact = typed('/model fixture:small', longerFirst);
    assert.equal(exact.activeItem?.name, 'fixture:small-2');
    assert.deepEqual(exact.key('Enter'), { handled: false });
    const chosen = typed('/model fixture:small', longerFirst);
    chosen.key('ArrowDown');
    chosen.key('ArrowDown');
    assert.deepEqual(chosen.key('Enter'), { handled: true, text: '/model fixture:small-2 ' }, 'what the arrows chose');
    const stop = typed('/stop', [command('stopall'), command('stop')]);
    assert.deepEqual(
      stop.key('Enter'),
      { handled: false },
      'a command name typed out in full, another starting with it',
    );
  });

  it('Enter with nothing of the argument typed sends the command as it is', () => {
    assert.deepEqual(typed('/model ', withValues).key('Enter'), { handled: false });
    assert.deepEqual(
      typed('/model fixture:large', withValues).key('Enter'),
      { handled: false },
      'a value typed out in full is sent',
    );
  });
});
