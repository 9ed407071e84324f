import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  COMMANDS_EXTENSION_URI,
  CommandRegistry,
  CommandRegistrationError,
  commandArgumentsExtension,
  commandsExtension,
  withCommandsExtension,
} from '../../src/commands/index.js';
import { COMMAND_ARGUMENTS_EXTENSION_URI } from '../../src/wire.js';
import { baseAgentCard } from '../../src/server/card.js';

const handler = () => ({ text: 'ok' });

describe('command registry', () => {
  it('CMD-15: refuses malformed names, naming the offender', () => {
    const registry = new CommandRegistry();
    for (const name of ['', 'Model', '1st', 'a b', 'a_b', '-x', 'ünï']) {
      assert.throws(
        () => registry.register({ name, description: 'd', handler }),
        (error: Error) => {
          assert.ok(error instanceof CommandRegistrationError);
          assert.ok(error.message.includes(JSON.stringify(name)), error.message);
          return true;
        },
      );
    }
    assert.deepEqual(registry.list(), []);
  });

  it('CMD-15: refuses a taken name and an empty description; nothing is dropped silently', () => {
    const registry = new CommandRegistry();
    registry.register({ name: 'deploy', description: 'Deploy it', handler });
    assert.throws(
      () => registry.register({ name: 'deploy', description: 'Again', handler }),
      /"deploy" is already registered/,
    );
    assert.throws(
      () => registry.register({ name: 'empty', description: '  ', handler }),
      /"empty" needs a non-empty description/,
    );
    assert.deepEqual(
      registry.list().map((c) => c.name),
      ['deploy'],
    );
  });

  it('CMD-15: argument_hint defaults to ""', () => {
    const registry = new CommandRegistry();
    registry.register({ name: 'x', description: 'X', handler });
    assert.equal(registry.get('x')?.argumentHint, '');
  });

  it('CMD-14: the card has exactly one extension entry, valid against the published schema, in registration order', () => {
    const registry = new CommandRegistry();
    registry.register({ name: 'help', description: 'Help', argumentHint: '[<command>]', handler });
    registry.register({ name: 'model', description: 'Model', argumentHint: '[<model>]', handler });
    registry.register({ name: 'status', description: 'Status', handler });
    const base = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: '0' });
    const card = withCommandsExtension(withCommandsExtension(base, registry), registry);
    const entries = card.capabilities!.extensions.filter((e) => e.uri === COMMANDS_EXTENSION_URI);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.required, false);
    assert.deepEqual(entries[0]!.params, {
      commands: [
        { name: 'help', description: 'Help', argument_hint: '[<command>]' },
        { name: 'model', description: 'Model', argument_hint: '[<model>]' },
        { name: 'status', description: 'Status', argument_hint: '' },
      ],
    });
    const schema = JSON.parse(
      readFileSync(new URL('../../spec/commands-extension-v1.schema.json', import.meta.url), 'utf8'),
    );
    const validate = new Ajv({ strict: false }).compile(schema);
    assert.ok(validate(entries[0]!.params), JSON.stringify(validate.errors));
    assert.ok(!validate({ commands: [{ name: 'x', description: 'y', extra: 1 }] }), 'the schema refuses extra keys');
  });

  it('the command-arguments extension: the values each command offers now, valid against its schema, and no entry when none offers any', () => {
    const registry = new CommandRegistry();
    registry.register({ name: 'status', description: 'Status', handler });
    assert.equal(commandArgumentsExtension(registry), undefined, 'nothing to offer, nothing declared');
    let models = ['builtin:echo'];
    registry.register({
      name: 'model',
      description: 'Model',
      handler,
      argumentValues: () => [models.map((value) => ({ value }))],
    });
    registry.register({
      name: 'pair',
      description: 'Two',
      handler,
      argumentValues: () => [undefined, [{ value: 'x', description: 'the x' }]],
    });
    const card = withCommandsExtension(baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: '0' }), registry);
    const entry = card.capabilities!.extensions.find((e) => e.uri === COMMAND_ARGUMENTS_EXTENSION_URI)!;
    assert.deepEqual(entry.params, {
      arguments: [
        { command: 'model', position: 0, values: [{ value: 'builtin:echo' }] },
        { command: 'pair', position: 1, values: [{ value: 'x', description: 'the x' }] },
      ],
    });
    const schema = JSON.parse(
      readFileSync(new URL('../../spec/command-arguments-extension-v1.schema.json', import.meta.url), 'utf8'),
    );
    const validate = new Ajv2020({ strict: false }).compile(schema);
    assert.ok(validate(entry.params), JSON.stringify(validate.errors));
    assert.ok(
      !validate({ arguments: [{ command: 'Model', position: 0, values: [] }] }),
      'the schema holds the name rule',
    );
    models = ['builtin:echo', 'fixture:small'];
    assert.deepEqual(
      commandArgumentsExtension(registry)!.params!.arguments[0].values,
      [{ value: 'builtin:echo' }, { value: 'fixture:small' }],
      'read again at each build',
    );
  });

  it('CMD-16: the extension entry follows the registry as it changes', () => {
    const registry = new CommandRegistry();
    registry.register({ name: 'a', description: 'A', handler });
    assert.deepEqual(
      commandsExtension(registry).params!.commands.map((c: { name: string }) => c.name),
      ['a'],
    );
    registry.register({ name: 'b', description: 'B', handler });
    registry.unregister('a');
    assert.deepEqual(
      commandsExtension(registry).params!.commands.map((c: { name: string }) => c.name),
      ['b'],
    );
  });
});

describe('issue 38: who a command is offered to', () => {
  const build = (visibility?: (name: string) => 'public' | 'authenticated' | undefined) => {
    const registry = new CommandRegistry(visibility ? { visibility: (command) => visibility(command.name) } : {});
    registry.register({ name: 'open', description: 'd', handler });
    registry.register({ name: 'own', description: 'd', visibility: 'authenticated', handler });
    registry.register({
      name: 'pick',
      description: 'd',
      argumentValues: (audience) => [[{ value: audience }]],
      handler,
    });
    return registry;
  };
  const names = (card: ReturnType<typeof baseAgentCard>) =>
    (card.capabilities!.extensions!.find((e) => e.uri === COMMANDS_EXTENSION_URI)!.params as any).commands.map(
      (c: any) => c.name,
    );
  const card = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: '0' });

  it('issue 38: the public card leaves out an authenticated command; the extended card lists it, in order', () => {
    const registry = build();
    assert.deepEqual(names(withCommandsExtension(card, registry)), ['open', 'pick']);
    assert.deepEqual(names(withCommandsExtension(card, registry, 'authenticated')), ['open', 'own', 'pick']);
  });

  it("issue 38: argument values are read for the card's audience", () => {
    const args = (audience: 'public' | 'authenticated') =>
      (commandArgumentsExtension(build(), audience)!.params as any).arguments[0].values[0].value;
    assert.equal(args('public'), 'public');
    assert.equal(args('authenticated'), 'authenticated');
  });

  it("issue 38: the registry's option decides over the definition's, either way", () => {
    const registry = build((name) => (name === 'open' ? 'authenticated' : name === 'own' ? 'public' : undefined));
    assert.deepEqual(
      registry.offeredTo(false).map((c) => c.name),
      ['own', 'pick'],
    );
    assert.equal(registry.offers('open', false), false);
    assert.equal(registry.offers('open', true), true);
    assert.equal(registry.offers('nothing', true), false);
  });
});
