/**
 * Property-based tests of command recognition (CMD-1 to CMD-3) with fast-check: instead of a
 * handful of examples, each rule is checked on a few hundred generated registries and texts.
 *
 * The oracle `expected()` restates CMD-1 without the parser's regular expression: the text with
 * trailing white space removed must be `/` + a registered name, followed by the end or by a
 * space or tab; the arguments are the rest, trimmed. A failing run prints the smallest
 * counterexample fast-check found and its seed; replay it with `{ seed, path }` in `RUNS`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { parseCommand, parseCommandText, type ParsedCommand } from '@tiny-harness/commands-extension';
import { checkProperty } from '../support/property.js';

const RUNS = { numRuns: 300 } as const;

/** The white space `String.prototype.trimEnd` removes, which CMD-1 calls "trailing white space". */
const WHITE_SPACE = [
  ' ',
  '\t',
  '\n',
  '\r',
  '\v',
  '\f',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
];

const commandName = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
const names = fc.uniqueArray(commandName, { minLength: 1, maxLength: 6 });
const whiteSpace = fc.string({ unit: fc.constantFrom(...WHITE_SPACE), maxLength: 6 });
const separator = fc.string({ unit: fc.constantFrom(' ', '\t'), minLength: 1, maxLength: 4 });

/** Any text: ASCII heavy on the characters that matter here, plus the rest of Unicode. */
const anyText = fc.oneof(
  fc.string({
    unit: fc.constantFrom('/', ' ', '\t', '\n', '\r', ':', '-', 'a', 'm', 'Z', '0', '\u00a0', '\u2028', 'é', '😀'),
    maxLength: 30,
  }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

/** Argument text: several lines, tabs, any Unicode. */
const argsText = fc.oneof(
  anyText,
  fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 4 }).map((lines) => lines.join('\n')),
  fc.tuple(whiteSpace, fc.string({ maxLength: 20 }), whiteSpace).map(([a, b, c]) => `${a}${b}\t${b}${c}`),
);

/** CMD-1 restated without the parser's regular expression. */
function expected(text: string, registered: readonly string[]): ParsedCommand | undefined {
  const body = text.trimEnd();
  for (const candidate of registered) {
    const head = `/${candidate}`;
    if (!body.startsWith(head)) continue;
    const next = body.charAt(head.length);
    if (next === '' || next === ' ' || next === '\t') return { name: candidate, args: body.slice(head.length).trim() };
  }
  return undefined;
}

function text(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} };
}

function message(parts: Part[]): Message {
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

/** Parts that are not text: data (whose value may even look like a command), a URL file, raw bytes. */
const nonTextPart: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ text: fc.string() }).map((value): Part => ({
    content: { $case: 'data', value },
    mediaType: 'application/json',
    filename: '',
    metadata: {},
  })),
  fc.string().map((filename): Part => ({
    content: { $case: 'url', value: 'https://example.test/model' },
    mediaType: 'text/plain',
    filename,
    metadata: {},
  })),
  fc.uint8Array({ maxLength: 16 }).map((bytes): Part => ({
    content: { $case: 'raw', value: Buffer.from(bytes) },
    mediaType: 'application/octet-stream',
    filename: '/model',
    metadata: {},
  })),
);

/** A registry, one of its names and a text that would be that command on its own. */
const commandCase = names.chain((registered) =>
  fc.record({ registered: fc.constant(registered), name: fc.constantFrom(...registered), separator, args: argsText }),
);

const isIn = (registered: readonly string[]) => (candidate: string) => registered.includes(candidate);

describe('command recognition, for any input', () => {
  it('CMD-1: /<name><space or tab><args> parses to that name and the args trimmed, multi-line and tabs included', () => {
    checkProperty(
      'a command parses to its name and its trimmed arguments',
      fc.property(commandCase, ({ registered, name, separator, args }) => {
        const parsed = parseCommandText(`/${name}${separator}${args}`, isIn(registered));
        assert.deepEqual(parsed, { name, args: args.trim() });
        assert.deepEqual(parseCommand(message([text(`/${name}${separator}${args}`)]), isIn(registered)), parsed);
        assert.deepEqual(parseCommandText(`/${name}`, isIn(registered)), { name, args: '' });
      }),
      RUNS,
    );
  });

  it('CMD-1: the parser agrees with the rule on any text: a command exactly when /<registered name> is followed by the end, a space or a tab', () => {
    const near = fc
      .tuple(names, anyText, anyText, fc.constantFrom('', ' ', '\t', '\n', ':', '-', 'x', 'X', '/', '\u00a0'))
      .chain(([registered, before, after, glue]) =>
        fc.record({
          registered: fc.constant(registered),
          text: fc
            .constantFrom(...registered)
            .chain((n) =>
              fc.constantFrom(
                `/${n}${glue}${after}`,
                `${before}/${n}${glue}${after}`,
                `/${n.slice(0, -1)}${glue}${after}`,
                before,
              ),
            ),
        }),
      );
    checkProperty(
      'the parser agrees with the rule',
      fc.property(near, ({ registered, text: value }) => {
        assert.deepEqual(parseCommandText(value, isIn(registered)), expected(value, registered), JSON.stringify(value));
        assert.deepEqual(parseCommand(message([text(value)]), isIn(registered)), expected(value, registered));
      }),
      { numRuns: 500 },
    );
  });

  it('CMD-1: trailing white space never matters', () => {
    const input = fc.oneof(
      commandCase.map(({ registered, name, separator, args }) => ({
        registered,
        value: `/${name}${separator}${args}`,
      })),
      fc.record({ registered: names, value: anyText }),
    );
    checkProperty(
      'trailing white space never matters',
      fc.property(input, whiteSpace, ({ registered, value }, trailing) => {
        assert.deepEqual(
          parseCommandText(`${value}${trailing}`, isIn(registered)),
          parseCommandText(value, isIn(registered)),
        );
      }),
      RUNS,
    );
  });

  it('CMD-1: only the registry decides which names are commands', () => {
    checkProperty(
      'only the registry decides',
      fc.property(commandCase, ({ registered, name, separator, args }) => {
        const others = registered.filter((n) => n !== name);
        assert.equal(parseCommandText(`/${name}${separator}${args}`, isIn(others)), undefined);
        assert.equal(
          parseCommandText(`/${name}${separator}${args}`, () => false),
          undefined,
        );
      }),
      RUNS,
    );
  });

  it('CMD-2: a message with more than one part, or a part that is not text, never parses', () => {
    const parts = fc.array(
      fc.oneof(
        nonTextPart,
        commandCase.map(({ name, args }) => text(`/${name} ${args}`)),
      ),
      { minLength: 2, maxLength: 4 },
    );
    checkProperty(
      'several parts, or a part not text, never parse',
      fc.property(names, parts, nonTextPart, (registered, many, single) => {
        const all = () => true; // even a registry that accepts every name
        assert.equal(parseCommand(message(many), all), undefined);
        assert.equal(parseCommand(message([single]), all), undefined);
        assert.equal(parseCommand(message([text(`/${registered[0]}`), single]), isIn(registered)), undefined);
        assert.equal(parseCommand(message([]), all), undefined);
      }),
      RUNS,
    );
  });

  it('CMD-3: upper case, a colon, a double slash, leading white space or an unregistered name never parse', () => {
    const misses = commandCase.chain(({ registered, name, separator, args }) => {
      const letters = [...name].flatMap((c, i) => (/[a-z]/.test(c) ? [i] : []));
      return fc.record({
        registered: fc.constant(registered),
        name: fc.constant(name),
        rest: fc.constant(`${separator}${args}`),
        upper: fc
          .subarray(letters, { minLength: 1 })
          .map((at) => [...name].map((c, i) => (at.includes(i) ? c.toUpperCase() : c)).join('')),
        afterColon: anyText,
        leading: fc.string({ unit: fc.constantFrom(...WHITE_SPACE), minLength: 1, maxLength: 3 }),
        unregistered: commandName.filter((n) => !registered.includes(n)),
      });
    });
    checkProperty(
      'near misses never parse',
      fc.property(misses, ({ registered, name, rest, upper, afterColon, leading, unregistered }) => {
        const misshapen = [
          `/${upper}${rest}`,
          `/${upper}`,
          `/${name}:${afterColon}`,
          `//${name}${rest}`,
          `//${name}`,
          `${leading}/${name}${rest}`,
          `${leading}/${name}`,
        ];
        // The shape rule holds whatever the registry would accept, even a name with upper case.
        for (const accepts of [isIn(registered), () => true]) {
          for (const value of misshapen) {
            assert.equal(parseCommandText(value, accepts), undefined, JSON.stringify(value));
            assert.equal(parseCommand(message([text(value)]), accepts), undefined, JSON.stringify(value));
          }
        }
        for (const value of [`/${unregistered}${rest}`, `/${unregistered}`]) {
          assert.equal(parseCommandText(value, isIn(registered)), undefined, JSON.stringify(value));
          assert.equal(parseCommand(message([text(value)]), isIn(registered)), undefined, JSON.stringify(value));
        }
      }),
      RUNS,
    );
  });
});
