import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { parseCommand } from '../../src/commands/index.js';

const registered = new Set(['model', 'help', 'status', 'run-tests']);
const isRegistered = (name: string) => registered.has(name);

function text(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} };
}

function message(...parts: Part[]): Message {
  return {
    messageId: 'm1',
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts,
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

describe('command recognition', () => {
  it('CMD-1: a single text part /<name> <args> for a registered name is a command', () => {
    assert.deepEqual(parseCommand(message(text('/model openai:gpt-5')), isRegistered), {
      name: 'model',
      args: 'openai:gpt-5',
    });
    assert.deepEqual(parseCommand(message(text('/model')), isRegistered), { name: 'model', args: '' });
    assert.deepEqual(parseCommand(message(text('/run-tests now')), isRegistered), { name: 'run-tests', args: 'now' });
  });

  it('CMD-1: trailing white space is removed and arguments are trimmed', () => {
    assert.deepEqual(parseCommand(message(text('/status  \n\t ')), isRegistered), { name: 'status', args: '' });
    assert.deepEqual(parseCommand(message(text('/model \t  builtin:echo   ')), isRegistered), {
      name: 'model',
      args: 'builtin:echo',
    });
  });

  it('CMD-1: arguments may span several lines', () => {
    assert.deepEqual(parseCommand(message(text('/help first line\nsecond line\n')), isRegistered), {
      name: 'help',
      args: 'first line\nsecond line',
    });
  });

  it('CMD-2: more than one part, or a part that is not text, is never a command', () => {
    assert.equal(parseCommand(message(text('/model'), text('more')), isRegistered), undefined);
    const data: Part = {
      content: { $case: 'data', value: { text: '/model' } },
      mediaType: 'application/json',
      filename: '',
      metadata: {},
    };
    assert.equal(parseCommand(message(data), isRegistered), undefined);
    const file: Part = {
      content: { $case: 'url', value: 'https://example.test/model' },
      mediaType: 'text/plain',
      filename: '/model',
      metadata: {},
    };
    assert.equal(parseCommand(message(file), isRegistered), undefined);
    assert.equal(parseCommand(message(), isRegistered), undefined);
  });

  it('CMD-3: unregistered names and near misses are ordinary messages', () => {
    for (const value of [
      '/nope',
      '/Model',
      '/model:x',
      '//model',
      ' /model',
      '/model\nx',
      'model',
      '/',
      '/1model',
      '/mo del',
    ]) {
      assert.equal(parseCommand(message(text(value)), isRegistered), undefined, JSON.stringify(value));
    }
  });
});
