#!/usr/bin/env node
/**
 * The command line: one commander program whose subcommands define each flag once, and from
 * that one definition get their help, validation, defaults and "did you mean". Each action
 * loads what it needs when it runs: start-up is mostly module loading (bench/startup.ts).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { text as readAll } from 'node:stream/consumers';
import type { TransportName } from '@tiny-harness/conform';
import { CONFORM_EXIT, CONFORM_EXIT_MEANINGS } from '@tiny-harness/conform/exit-codes';
import { SEND_EXIT, SEND_EXIT_MEANINGS } from './client/exit-codes.js';
import { isHarnessError } from './errors.js';
import { describeError } from './log.js';
import { serve, ServeFlagError, type ServeFlags } from './serve.js';
import { VERSION } from './version.js';

/** A mistake on the command line that commander's own checks cannot see; exit code 2, like theirs. */
class UsageError extends Error {}

const USAGE_EXIT = 2;

function generationNumber(value: string): number {
  const generation = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(generation))
    throw new InvalidArgumentError('Give a generation: a whole number, 0 or more.');
  return generation;
}

function portNumber(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65535)
    throw new InvalidArgumentError('Give a port number from 0 to 65535 (0 picks a free one).');
  return number;
}

/** `--header "Name: value"`, repeatable; checked by the client that sends it. */
const headerOption = () =>
  new Option('--header <header>', 'add a request header, e.g. "Authorization: Bearer $TOKEN" (repeatable)').argParser(
    (value: string, previous: string[] = []) => [...previous, value],
  );

/** `--token` and `--token-command` (issue 38): the bearer token, or a command that prints it. */
const tokenOption = () => new Option('--token <token>', 'the bearer token to send (or TINY_HARNESS_TOKEN)');
const tokenCommandOption = () =>
  new Option(
    '--token-command <command>',
    'a command that prints the bearer token, run again when the agent refuses it, e.g. "gcloud auth print-identity-token"',
  );
/** `--card-key`: what the card's signature must verify with (issue 38). */
const cardKeyOption = () =>
  new Option(
    '--card-key <file-or-url>',
    "verify the agent card's signature with these keys, a JWKS URL or a file (JWKS, JWK or PEM public key), and refuse a card that fails; never a key the card names",
  );

/** The exit codes as `--help` lists them. */
function exitCodeHelp(codes: Record<string, number>, meanings: Record<string, string>): string {
  const lines = Object.entries(codes).map(([name, code]) => `  ${code}  ${meanings[name]}`);
  return `\nExit codes:\n${lines.join('\n')}`;
}

/** The agent's URL, headers, token and `--card-key` as the clients take them, or a usage error. */
async function clientTarget(
  url: string,
  headers: string[] = [],
  flags: { token?: string; tokenCommand?: string; cardKey?: string } = {},
) {
  const [{ agentBaseUrl, parseHeader }, { tokenSourceOf }] = await Promise.all([
    import('./client/connect.js'),
    import('./client/token-source.js'),
  ]);
  const base = agentBaseUrl(url);
  if ('problem' in base) throw new UsageError(base.problem);
  const token = tokenSourceOf(flags, process.env);
  if (typeof token === 'string') throw new UsageError(token);
  if (token && headers.some((text) => /^\s*authorization\s*:/i.test(text)))
    throw new UsageError('give the token with --token or --token-command, or an Authorization --header, not both');
  return {
    url: base.url,
    token,
    cardKey: flags.cardKey,
    headers: headers.map((text) => {
      const header = parseHeader(text);
      if (typeof header === 'string') throw new UsageError(header);
      return header;
    }),
  };
}

/** The text `send` sends: its arguments, or standard input when the text is `-` or none is given off a terminal. */
async function messageText(words: string[]): Promise<string> {
  const fromInput = (words.length === 1 && words[0] === '-') || (words.length === 0 && !process.stdin.isTTY);
  if (!fromInput) {
    if (words.length === 0)
      throw new UsageError('give the text to send: tiny-harness send <url> <text>, or pipe it in');
    return words.join(' ');
  }
  const text = (await readAll(process.stdin)).trimEnd();
  if (!text.trim()) throw new UsageError('standard input was empty: there is no text to send');
  return text;
}

function program(): Command {
  const root = new Command('tiny-harness')
    .description('An A2A 1.0 agent harness with slash commands.')
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .exitOverride()
    .configureOutput({
      // Commander puts "(Did you mean --json?)" on a line of its own: one line reads better.
      outputError: (message, write) => write(message.replace(/\n\(Did you mean/, ' (Did you mean')),
    })
    .addHelpText(
      'after',
      '\nModel keys come from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY, or the\n' +
        'variable a provider names with "apiKeyEnv" in the config file.',
    );

  root
    .command('serve')
    .summary('serve the harness')
    .description('Serve the harness: A2A over JSON-RPC, HTTP+JSON (and gRPC), the agent card and the web page.')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .addOption(
      new Option('--port <port>', 'HTTP port for JSON-RPC, HTTP+JSON and the card; 0 picks a free one')
        .argParser(portNumber)
        .default(8080),
    )
    .addOption(
      new Option('--grpc-port <port>', 'also serve gRPC on this port; 0 picks a free one').argParser(portNumber),
    )
    .option('--data-dir <dir>', 'where tasks are stored', './.tiny-harness')
    .addOption(
      new Option(
        '--database <url>',
        'store everything in PostgreSQL instead (postgres://user@host:5432/db), shared by every instance given it',
      ).env('TINY_HARNESS_DATABASE_URL'),
    )
    .option('--commands-dir <dir>', 'command files (*.md, one command each), watched (default: <data dir>/commands)')
    .option('--skills-dir <dir>', 'skills (a folder with a SKILL.md each), watched (default: <data dir>/skills)')
    .option('--agents-dir <dir>', 'sub-agents (*.md, Claude Code agent files), watched (default: <data dir>/agents)')
    .option('--config <file>', 'JSON configuration: models, providers, system prompt, ... (docs/configuration.md)')
    .option(
      '--tokens-file <file>',
      'bearer tokens, one user:token a line (or TINY_HARNESS_TOKENS=user:token,...): every A2A call needs one',
    )
    .option('--public-url <url>', 'the address clients reach the harness at through a proxy; the card names it')
    .option(
      '--agent <module>',
      'run this AgentExecutor of @a2a-js/sdk (the default export) instead of a model (docs/embedding.md)',
    )
    .option('--log-content', 'also log the text of each message (debugging; or TINY_HARNESS_LOG_CONTENT=1)')
    .addHelpText('after', '\nTINY_HARNESS_LOG_LEVEL=debug logs more (e.g. a messageId reused for another message).')
    .action((flags: ServeFlags) => serve(flags));

  root
    .command('chat')
    .summary('talk to an A2A agent in the terminal')
    .description('Talk to the A2A agent at <url> in the terminal: / and Tab list its commands.')
    .argument('<url>', "the agent's base URL, e.g. http://127.0.0.1:8080")
    .option('--task <id>', 'resume this task: its conversation so far is shown, then the prompt')
    .option('-c, --continue', 'go on in your latest conversation')
    .option('-r, --resume', 'choose one of your recent conversations to go on in')
    .addOption(headerOption())
    .addOption(tokenOption())
    .addOption(tokenCommandOption())
    .addOption(cardKeyOption())
    .addHelpText(
      'after',
      '\nCtrl+C stops a running turn (twice: leaves), or exits at an empty prompt; Ctrl+D exits.\n' +
        'On leaving it prints the command that resumes the conversation.',
    )
    .action(async (url: string, flags: ChatFlags) => {
      const given = [flags.task !== undefined && '--task', flags.continue && '--continue', flags.resume && '--resume'];
      if (given.filter(Boolean).length > 1) throw new UsageError(`give one of ${given.filter(Boolean).join(', ')}`);
      const target = await clientTarget(url, flags.header, flags);
      const { runChat } = await import('./client/index.js');
      const pick = flags.continue ? 'latest' : flags.resume ? 'choose' : undefined;
      process.exit(await runChat({ ...target, taskId: flags.task, pick }));
    });

  const send = root
    .command('send')
    .summary('send one message and print the reply, for scripts')
    .description(
      'Send one message and print the reply on standard output; the task id, tool calls and diagnostics go to ' +
        'standard error. The text is read from standard input when it is "-", or when none is given and ' +
        'standard input is not a terminal.',
    )
    .argument('<url>', "the agent's base URL, e.g. http://127.0.0.1:8080")
    .argument('[text...]', 'the message')
    .option('--stream', 'print the reply as it arrives')
    .option('--json', 'print the A2A objects, one JSON object per line')
    .option('--task <id>', 'continue this task')
    .option('--context <id>', 'send in this context')
    .addOption(
      new Option(
        '--if-generation <n>',
        "send only if the task (--task) is still at this generation (A2A 1.1's ifGenerationMatch); blocking",
      ).argParser(generationNumber),
    )
    .option('--wait', 'wait for the sub-tasks the message started and print their results (default on a terminal)')
    .option(
      '--no-wait',
      'do not wait for sub-tasks, nor for the turn a command starts (/approve, an inline command file)',
    )
    .addOption(headerOption())
    .addOption(tokenOption())
    .addOption(tokenCommandOption())
    .addOption(cardKeyOption())
    .addHelpText('after', exitCodeHelp(SEND_EXIT, SEND_EXIT_MEANINGS));
  // --wait and --no-wait share one value, the last one given: both at once is a mistake worth naming.
  const waitFlags = new Set<string>();
  send.on('option:wait', () => waitFlags.add('--wait')).on('option:no-wait', () => waitFlags.add('--no-wait'));
  send.action(async (url: string, words: string[], flags: SendFlags) => {
    if (waitFlags.size === 2) throw new UsageError('give --wait or --no-wait, not both');
    if (flags.ifGeneration !== undefined && flags.task === undefined)
      throw new UsageError('--if-generation needs --task: a new task has no generation to match');
    if (flags.ifGeneration !== undefined && flags.stream)
      throw new UsageError('--if-generation sends a blocking message: leave out --stream');
    const target = await clientTarget(url, flags.header, flags);
    const text = await messageText(words);
    const { runSend } = await import('./client/index.js');
    const code = await runSend({
      ...target,
      text,
      stream: flags.stream === true,
      json: flags.json === true,
      taskId: flags.task,
      contextId: flags.context,
      ifGeneration: flags.ifGeneration,
      // Waiting for sub-tasks is for a person at a terminal, unless asked either way.
      wait: flags.wait ?? process.stdout.isTTY === true,
      followResumedTurn: flags.wait !== false,
    });
    process.exit(code);
  });

  root
    .command('conform')
    .summary('check a server against the Commands extension v1')
    .description('Check, rule by rule, that the A2A server at <url> implements the Commands extension v1.')
    .argument('<url>', "the server's base URL, e.g. http://127.0.0.1:8080")
    .addOption(
      new Option(
        '--transport <transport>',
        'check only this transport: jsonrpc, http+json, grpc or all (default: all)',
      ).argParser(transportName),
    )
    .addOption(
      new Option('--only <rules>', 'only the checks of these rules, comma-separated, e.g. CMD-4,CMD-8').argParser(
        ruleList,
      ),
    )
    .option(
      '--command <command>',
      'the command to send, with its arguments, e.g. "spawn say hi" (default: one that takes no arguments); ' +
        'one that starts a sub-task lets task_ref be checked (CMD-30)',
    )
    .option('--allow-model', 'also send ordinary messages, which a conforming server gives to its model (CMD-2, CMD-3)')
    .option('--json', 'print the report as JSON')
    .addOption(headerOption())
    .addOption(tokenOption())
    .addOption(tokenCommandOption())
    .addOption(cardKeyOption())
    .addHelpText('after', exitCodeHelp(CONFORM_EXIT, CONFORM_EXIT_MEANINGS))
    .action(async (url: string, flags: ConformFlags) => {
      const target = await clientTarget(url, flags.header, flags);
      const { runConform } = await import('@tiny-harness/conform');
      // The kit sends its headers as given: the token is read once, up front.
      const token = target.token && { Authorization: `Bearer ${await target.token.current()}` };
      const code = await runConform({
        url: target.url,
        cardKey: target.cardKey,
        headers: { ...Object.fromEntries(target.headers), ...token },
        transports:
          flags.transport === undefined || flags.transport === 'all'
            ? undefined
            : [flags.transport.toUpperCase() as TransportName],
        only: flags.only,
        command: flags.command,
        allowModel: flags.allowModel === true,
        json: flags.json === true,
      });
      process.exit(code);
    });
  return root;
}

interface ChatFlags {
  token?: string;
  tokenCommand?: string;
  task?: string;
  continue?: boolean;
  resume?: boolean;
  header?: string[];
  cardKey?: string;
}

interface SendFlags {
  token?: string;
  tokenCommand?: string;
  stream?: boolean;
  ifGeneration?: number;
  json?: boolean;
  task?: string;
  context?: string;
  wait?: boolean;
  header?: string[];
  cardKey?: string;
}

interface ConformFlags {
  token?: string;
  tokenCommand?: string;
  transport?: string;
  only?: string[];
  command?: string;
  allowModel?: boolean;
  json?: boolean;
  header?: string[];
  cardKey?: string;
}

const TRANSPORT_CHOICES = ['jsonrpc', 'http+json', 'grpc', 'all'];

function transportName(value: string): string {
  const name = value.toLowerCase();
  if (!TRANSPORT_CHOICES.includes(name))
    throw new InvalidArgumentError(`Allowed choices are ${TRANSPORT_CHOICES.join(', ')}.`);
  return name;
}

function ruleList(value: string): string[] {
  const rules = value
    .split(',')
    .map((rule) => rule.trim().toUpperCase())
    .filter(Boolean);
  if (rules.length === 0 || rules.some((rule) => !/^CMD-\d+$/.test(rule)))
    throw new InvalidArgumentError('Give rule ids such as CMD-4,CMD-8.');
  return rules;
}

/** The exit code for what an action threw, with its one line on standard error. */
function failure(error: unknown): number {
  // Commander has printed it already: help asked for exits 0; a mistake, or help for a bare command, is bad usage.
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_EXIT;
  if (error instanceof UsageError || error instanceof ServeFlagError) {
    process.stderr.write(`error: ${error.message}\n`);
    return USAGE_EXIT;
  }
  if (isHarnessError(error)) {
    const hint = error.code === 'data_unusable' ? ' Choose another folder with --data-dir.' : '';
    process.stderr.write(`tiny-harness: ${error.message}${hint}\n`);
    return 1;
  }
  if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
    const taken = (error as { port?: number }).port;
    process.stderr.write(
      `tiny-harness: the port${taken === undefined ? '' : ` ${taken}`} is already in use; choose another with --port or --grpc-port (0 picks a free one).\n`,
    );
    return 1;
  }
  process.stderr.write(`tiny-harness: could not start: ${describeError(error)}\n`);
  return 1;
}

// `serve` runs until a signal; the clients end the process with their exit code.
program()
  .parseAsync(process.argv)
  .catch((error: unknown) => process.exit(failure(error)));
