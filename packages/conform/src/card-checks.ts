/**
 * What the agent card must say (CMD-14, CMD-15): one entry for the extension, `required`
 * false, params valid against the published schema, names well formed and unique with a
 * description each, in an order that holds between two reads.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { CardRead } from './probe-client.js';
import { COMMANDS_URI } from './probe-client.js';
import type { Results } from './results.js';
import { paramsSchema } from './spec-text.js';

const NAME = /^[a-z][a-z0-9-]*$/;

/** One command as the card lists it. */
export interface ListedCommand {
  name: string;
  description: string;
  argumentHint: string;
}

type RawEntry = { uri?: unknown; required?: unknown; params?: { commands?: unknown } };

/** The card's extension entries with the Commands URI, as served. */
export function commandsEntries(raw: Record<string, unknown>): RawEntry[] {
  const extensions = (raw['capabilities'] as { extensions?: unknown } | undefined)?.extensions;
  return Array.isArray(extensions) ? (extensions as RawEntry[]).filter((entry) => entry?.uri === COMMANDS_URI) : [];
}

/** The commands the entry lists, whatever else is wrong with it. */
export function listedCommands(raw: Record<string, unknown>): ListedCommand[] {
  const listed = commandsEntries(raw)[0]?.params?.commands;
  if (!Array.isArray(listed)) return [];
  return listed
    .filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null && typeof c.name === 'string')
    .map((c) => ({
      name: String(c.name),
      description: typeof c.description === 'string' ? c.description : '',
      argumentHint: typeof c.argument_hint === 'string' ? c.argument_hint : '',
    }));
}

/** Checks the card read first; against a second read for the order, when one could be made. */
export function checkCard(first: CardRead, second: CardRead | undefined, results: Results): void {
  const entries = commandsEntries(first.raw);
  const entry = entries[0]!;
  results.judge(
    'CMD-14',
    'the card has exactly one entry for the extension',
    entries.length === 1 ? undefined : `${entries.length} entries with the extension's URI`,
  );
  // `required: true` is judged by sending without activating the extension (command-checks.ts).
  if (entry.required !== true)
    results.judge(
      'CMD-14',
      'the entry says required: false',
      entry.required === false || entry.required === undefined
        ? undefined
        : `required is ${JSON.stringify(entry.required)}`,
    );

  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(paramsSchema());
  const valid = validate(entry.params ?? {});
  const schemaProblems = (validate.errors ?? []).map(
    (error) =>
      `${error.instancePath || '(params)'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`,
  );
  results.judge(
    'CMD-14',
    'the params are valid against commands-extension-v1.schema.json',
    valid ? undefined : schemaProblems.join('; '),
  );

  const commands = listedCommands(first.raw);
  const badNames = commands.filter((c) => !NAME.test(c.name)).map((c) => JSON.stringify(c.name));
  results.judge(
    'CMD-15',
    'every name matches [a-z][a-z0-9-]*',
    badNames.length ? `names that do not: ${badNames.join(', ')}` : undefined,
  );
  const seen = new Set<string>();
  const repeated = commands.filter((c) => seen.has(c.name) || !seen.add(c.name)).map((c) => c.name);
  results.judge(
    'CMD-15',
    'every name is listed once',
    repeated.length ? `listed more than once: ${[...new Set(repeated)].join(', ')}` : undefined,
  );
  const undescribed = commands.filter((c) => !c.description.trim()).map((c) => c.name);
  results.judge(
    'CMD-15',
    'every command has a description',
    undescribed.length ? `no description: ${undescribed.join(', ')}` : undefined,
  );

  const title = 'the commands are listed in the same order on a second read';
  if (!second) return results.skip('CMD-14', title, 'the card could not be read a second time');
  const order = commands.map((c) => c.name).join(' ');
  const again = listedCommands(second.raw)
    .map((c) => c.name)
    .join(' ');
  results.judge('CMD-14', title, order === again ? undefined : `first read: ${order}; second read: ${again}`);
}

/**
 * The command the checks send: the one asked for, else one that takes no arguments (no hint),
 * else one whose arguments are optional (`[…]`), else the first listed.
 */
export function pickCommand(
  commands: readonly ListedCommand[],
  wanted?: string,
): { command?: ListedCommand; why: string } {
  if (wanted !== undefined) {
    const command = commands.find((c) => c.name === wanted);
    return command
      ? { command, why: 'asked for with --command' }
      : { why: `--command ${wanted}: the card lists no such command` };
  }
  const bare = commands.find((c) => !c.argumentHint.trim());
  if (bare) return { command: bare, why: 'the first listed that takes no arguments' };
  const optional = commands.find((c) => c.argumentHint.trim().startsWith('['));
  if (optional) return { command: optional, why: 'the first listed whose arguments are optional' };
  return commands[0]
    ? { command: commands[0], why: 'the first listed (every command takes arguments)' }
    : { why: 'the card lists no commands' };
}
