import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type AgentCard, type StreamResponse } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI } from '../../src/commands/index.js';
import { COMMAND_ARGUMENTS_EXTENSION_URI, unknownCommandQuestion } from '../../src/wire.js';
import { completeCommand, describeCommand } from '../../src/client/completion.js';
import {
  agentBaseUrl,
  cardCommands,
  describeClientError,
  parseHeader,
  requestHeaders,
  type CardCommand,
} from '../../src/client/connect.js';
import { TurnReader } from '../../src/client/render.js';

const COMMANDS: CardCommand[] = [
  { name: 'help', description: 'List the commands', argumentHint: '[<command>]' },
  { name: 'model', description: 'Show or choose the model', argumentHint: '[<model>]' },
  { name: 'status', description: "Show this task's state", argumentHint: '' },
  { name: 'review', description: 'Review a file', argumentHint: '<file>' },
  { name: 'review-all', description: 'Review everything', argumentHint: '' },
];

function card(extensions: unknown[]): AgentCard {
  return {
    name: 'x',
    capabilities: { streaming: true, pushNotifications: false, extensions, extendedAgentCard: false },
  } as unknown as AgentCard;
}

describe('completing commands from the card', () => {
  it('/ lists every command as /name hint — description', () => {
    assert.deepEqual(completeCommand('/', COMMANDS), {
      completions: [],
      list: [
        '/help [<command>] — List the commands',
        '/model [<model>] — Show or choose the model',
        "/status — Show this task's state",
        '/review <file> — Review a file',
        '/review-all — Review everything',
      ],
    });
  });

  it('a unique prefix completes to /name and a space; a shared one as far as the names agree', () => {
    assert.deepEqual(completeCommand('/mo', COMMANDS), { completions: ['/model '], list: [] });
    assert.deepEqual(completeCommand('/status', COMMANDS), { completions: ['/status '], list: [] });
    assert.deepEqual(completeCommand('/re', COMMANDS), { completions: ['/review'], list: [] });
    assert.deepEqual(completeCommand('/review', COMMANDS).list, [
      '/review <file> — Review a file',
      '/review-all — Review everything',
    ]);
  });

  it('nothing completes outside a command name, or for an unknown one', () => {
    for (const line of ['', 'hello', '/model ', '/model x', '/zzz', ' /mo'])
      assert.deepEqual(completeCommand(line, COMMANDS), { completions: [], list: [] });
  });

  it('after the name, an argument completes from the values the card lists (the command-arguments extension), a model by its name alone too', () => {
    const listed = card([
      {
        uri: COMMANDS_EXTENSION_URI,
        description: '',
        required: false,
        params: {
          commands: [
            { name: 'model', description: 'Model', argument_hint: '[<model>]' },
            { name: 'status', description: 'S', argument_hint: '' },
          ],
        },
      },
      {
        uri: COMMAND_ARGUMENTS_EXTENSION_URI,
        description: '',
        required: false,
        params: {
          arguments: [
            {
              command: 'model',
              position: 0,
              values: [
                { value: 'builtin:echo', description: 'Says it back' },
                { value: 'fixture:small' },
                { value: 'fixture:large' },
              ],
            },
          ],
        },
      },
    ]);
    const commands = cardCommands(listed);
    assert.deepEqual(completeCommand('/model b', commands), { completions: ['/model builtin:echo '], list: [] });
    assert.deepEqual(
      completeCommand('/model echo', commands),
      { completions: ['/model builtin:echo '], list: [] },
      'by the name after the provider',
    );
    assert.deepEqual(completeCommand('/model fix', commands), { completions: ['/model fixture:'], list: [] });
    assert.deepEqual(completeCommand('/model ', commands).list, [
      'builtin:echo — Says it back',
      'fixture:small',
      'fixture:large',
    ]);
    assert.deepEqual(completeCommand('/model zz', commands), { completions: [], list: [] });
    assert.deepEqual(
      completeCommand('/status x', commands),
      { completions: [], list: [] },
      'no values listed, nothing completes',
    );
  });

  it('a card without the commands extension has no commands, so nothing completes', () => {
    const bare = card([
      { uri: 'https://example.test/other', description: '', required: false, params: { commands: [{ name: 'nope' }] } },
    ]);
    assert.deepEqual(cardCommands(bare), []);
    assert.deepEqual(cardCommands({ name: 'no capabilities' } as unknown as AgentCard), []);
    assert.deepEqual(completeCommand('/', cardCommands(bare)), { completions: [], list: [] });
  });

  it('reads the commands from the extension entry, tolerating odd entries', () => {
    const withCommands = card([
      {
        uri: COMMANDS_EXTENSION_URI,
        description: '',
        required: false,
        params: {
          commands: [{ name: 'model', description: 'Choose', argument_hint: '[<m>]' }, { name: 'bare' }, 'junk', null],
        },
      },
    ]);
    assert.deepEqual(cardCommands(withCommands), [
      { name: 'model', description: 'Choose', argumentHint: '[<m>]' },
      { name: 'bare', description: '', argumentHint: '' },
    ]);
  });

  it('a long line is cut to the terminal width', () => {
    const line = describeCommand({ name: 'x', argumentHint: '', description: 'y'.repeat(200) }, 40);
    assert.equal(line.length, 40);
    assert.ok(line.endsWith('…'));
  });
});

describe('client options and errors', () => {
  it('reads --header values and refuses malformed ones', () => {
    assert.deepEqual(parseHeader('Authorization: Bearer a:b'), ['Authorization', 'Bearer a:b']);
    assert.equal(typeof parseHeader('no colon'), 'string');
    assert.equal(typeof parseHeader(': empty name'), 'string');
    assert.equal(typeof parseHeader('bad name: x'), 'string');
  });

  it('activates the extension in A2A-Extensions, keeping extensions the user named', () => {
    assert.deepEqual(requestHeaders([['X-A', '1']]), { 'X-A': '1', 'A2A-Extensions': COMMANDS_EXTENSION_URI });
    assert.deepEqual(requestHeaders([['a2a-extensions', 'https://example.test/e']]), {
      'a2a-extensions': `https://example.test/e, ${COMMANDS_EXTENSION_URI}`,
    });
    assert.deepEqual(requestHeaders([['A2A-Extensions', COMMANDS_EXTENSION_URI]]), {
      'A2A-Extensions': COMMANDS_EXTENSION_URI,
    });
  });

  it('takes an http(s) base URL without trailing slashes', () => {
    assert.deepEqual(agentBaseUrl('http://127.0.0.1:8080/'), { url: 'http://127.0.0.1:8080' });
    assert.ok('problem' in agentBaseUrl('127.0.0.1:8080'));
    assert.ok('problem' in agentBaseUrl('file:///etc/passwd'));
  });

  it('says what failed in one line', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    assert.equal(describeClientError(refused, 'http://h:1'), 'cannot reach http://h:1 (connection refused)');
    assert.equal(
      describeClientError(
        new Error('Failed to fetch Agent Card from http://h/.well-known/agent-card.json: 404'),
        'http://h',
      ),
      'no agent card at http://h/.well-known/agent-card.json (HTTP 404)',
    );
    assert.equal(describeClientError(new Error('first line\n    at stack (file.js:1:1)'), 'http://h'), 'first line');
  });
});

describe('reading a turn', () => {
  const status = (state: TaskState, text?: string, metadata: Record<string, unknown> = {}): StreamResponse => ({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        status: {
          state,
          timestamp: undefined,
          message:
            text === undefined
              ? undefined
              : ({
                  messageId: `m-${text}`,
                  parts: [{ content: { $case: 'text', value: text } }],
                  metadata,
                  referenceTaskIds: [],
                } as any),
        },
        metadata,
      },
    },
  });
  const chunk = (text: string): StreamResponse => ({
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        artifact: { parts: [{ content: { $case: 'text', value: text } }] } as any,
        append: true,
        lastChunk: false,
        metadata: {},
      },
    },
  });

  it('streams chunks, shows a command reply once, and does not repeat a streamed reply at the end', () => {
    const reader = new TurnReader();
    const shown = [
      status(TaskState.TASK_STATE_WORKING),
      chunk('Hel'),
      status(TaskState.TASK_STATE_WORKING, 'State: working', { command: 'status' }),
      status(TaskState.TASK_STATE_WORKING, 'State: working', { command: 'status' }),
      chunk('lo'),
      status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Hello'),
    ].flatMap((e) => reader.read(e));
    assert.deepEqual(shown, [
      { kind: 'text', text: 'Hel' },
      { kind: 'command', name: 'status', text: 'State: working', taskRef: undefined, messageId: 'm-State: working' },
      { kind: 'text', text: 'lo' },
      { kind: 'end', state: TaskState.TASK_STATE_INPUT_REQUIRED, text: '' },
    ]);
    assert.deepEqual(reader.finish(), []);
    assert.equal(reader.taskId, 't');
  });

  it('CMD-32: the final reply of a stopped turn adds its mark to what streamed: only the mark is shown at the end', () => {
    const reader = new TurnReader();
    const shown = [
      chunk('Hello, '),
      chunk('wor'),
      status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Hello, wor\n\n[stopped by the user]'),
    ].flatMap((e) => reader.read(e));
    assert.deepEqual(shown.at(-1), {
      kind: 'end',
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      text: '[stopped by the user]',
    });
    const other = new TurnReader();
    const differs = [chunk('one'), status(TaskState.TASK_STATE_INPUT_REQUIRED, 'two')].flatMap((e) => other.read(e));
    assert.deepEqual(differs.at(-1), { kind: 'end', state: TaskState.TASK_STATE_INPUT_REQUIRED, text: '' });
  });
});

describe('asking about an unknown command', () => {
  it('a /name the card does not list is asked about, with the closest name within two edits; a listed one, plain text or a card without commands is not', () => {
    const names = ['help', 'model', 'status', 'stop'];
    assert.equal(unknownCommandQuestion('/modle x', names), '/modle is not a command (did you mean /model?).');
    assert.equal(unknownCommandQuestion('/stauts', names), '/stauts is not a command (did you mean /status?).');
    assert.equal(unknownCommandQuestion('/deploy now', names), '/deploy is not a command.');
    assert.equal(unknownCommandQuestion('/model x', names), undefined);
    assert.equal(unknownCommandQuestion('hello /modle', names), undefined);
    assert.equal(unknownCommandQuestion(' /modle', names), undefined, 'a leading space is not a command (CMD-3)');
    assert.equal(unknownCommandQuestion('/modle', []), undefined, 'an agent without commands: nothing to ask');
  });
});
