#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import type { Header } from './client/index.js';
import { CONFORM_USAGE } from './conform/usage.js';
import { isHarnessError } from './errors.js';
import { createLogger, describeError, routeConsoleToLog } from './log.js';
import { VERSION } from './version.js';
import { closestName } from './wire.js';

const USAGE = `tiny-harness ${VERSION}: an A2A 1.0 agent harness with slash commands

Usage:
  tiny-harness serve [--host H] [--port P] [--grpc-port G] [--data-dir DIR] [--database URL] [--commands-dir DIR]
                     [--config FILE] [--tokens-file FILE] [--public-url URL] [--log-content]
  tiny-harness chat <url> [--task ID] [--header "Name: value"]...
  tiny-harness send <url> <text> [--stream] [--json] [--wait | --no-wait] [--task ID] [--context ID] [--header "Name: value"]...
  tiny-harness conform <url> [--transport T] [--only RULES] [--command NAME] [--allow-model] [--json] [--header "Name: value"]...
  tiny-harness --help | --version

serve options:
  --host H        address to listen on (default 127.0.0.1)
  --port P        HTTP port for JSON-RPC, HTTP+JSON and the agent card; 0 picks a free one (default 8080)
  --grpc-port G   also serve gRPC on this port; 0 picks a free one (default: no gRPC)
  --data-dir DIR  where tasks are stored (default ./.tiny-harness)
  --database URL  store everything in PostgreSQL instead, e.g. postgres://user@host:5432/db, shared by
                  every instance given the same URL (or TINY_HARNESS_DATABASE_URL=URL)
  --commands-dir DIR
                  command files (*.md, one command each), watched while serving
                  (default <data dir>/commands)
  --config FILE   JSON configuration: models, providers, system prompt, cache size, durability (see docs/configuration.md)
  --tokens-file FILE
                  bearer tokens, one user:token a line; with it (or TINY_HARNESS_TOKENS=user:token,...)
                  every A2A call needs "Authorization: Bearer <token>" (default: no authentication)
  --public-url URL
                  the address clients reach the harness at through a proxy, e.g. https://agent.example.com;
                  the agent card names it instead of the listening address (or "publicUrl" in the config)
  --log-content   also log the text of each message sent (debugging; or TINY_HARNESS_LOG_CONTENT=1);
                  TINY_HARNESS_LOG_LEVEL=debug logs more (e.g. a messageId reused for another message)

chat: talk to an A2A agent at <url> (e.g. http://127.0.0.1:8080) in the terminal. / and Tab
  list the agent's commands; Ctrl+C stops a running turn (twice: leaves), or exits at an empty
  prompt; Ctrl+D exits. On leaving it prints the command that resumes the conversation.
  --task ID       resume this task: its conversation so far is shown, then the prompt
send: send one message and print the reply on standard output; the task id goes to standard error.
  Exit code 0 when it worked, 1 when the request failed or the task ended failed or rejected.
  --stream        print the reply as it arrives
  --json          print the A2A objects, one JSON object per line
  --task ID       continue this task
  --context ID    send in this context
  --wait          wait for the sub-tasks the message started and print their results
                  (the default when standard output is a terminal; --no-wait: do not)
chat and send:
  --header "Name: value"
                  add a request header, e.g. for auth (repeatable)

${CONFORM_USAGE}

Model keys come from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY, or the
variable a provider names with "apiKeyEnv" in the config file.`;

class UsageError extends Error {}

/** What a stop may take beyond `shutdownGraceMs`: closing the transports, the tools and the store. */
const CLOSE_MARGIN_MS = 5000;

function port(value: string | undefined, flag: string, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65535)
    throw new UsageError(`${flag} must be a port number from 0 to 65535, not "${value}".`);
  return number;
}

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      'grpc-port': { type: 'string' },
      'data-dir': { type: 'string', default: './.tiny-harness' },
      database: { type: 'string' },
      'commands-dir': { type: 'string' },
      config: { type: 'string' },
      'tokens-file': { type: 'string' },
      'log-content': { type: 'boolean', default: false },
      'public-url': { type: 'string' },
    },
  });
  // Loaded here, not at the top: chat and send start in a fraction of the time without the server.
  const [
    { loadConfig },
    { startHarness },
    { loadTokens },
    { checkPublicAddress, publicUrlSchema },
    { describeDatabaseUrl, isPostgresUrl },
  ] = await Promise.all([
    import('./config/load.js'),
    import('./harness.js'),
    import('./server/auth-tokens.js'),
    import('./config/public-url.js'),
    import('./store/database-url.js'),
  ]);
  let publicUrl: string | undefined;
  if (values['public-url'] !== undefined) {
    const checked = checkPublicAddress(publicUrlSchema, values['public-url']);
    if ('problem' in checked) throw new UsageError(`--public-url ${checked.problem}.`);
    publicUrl = checked.value;
  }
  const log = createLogger({ level: process.env.TINY_HARNESS_LOG_LEVEL === 'debug' ? 'debug' : 'info' });
  routeConsoleToLog(log);
  const config = await loadConfig(values.config);
  const tokens = await loadTokens({
    env: process.env,
    file: values['tokens-file'] === undefined ? undefined : resolve(values['tokens-file']),
  });
  // The flag wins over the variable; the URL may hold a password, so only its host and database are logged.
  const databaseUrl = values.database ?? (process.env.TINY_HARNESS_DATABASE_URL || undefined);
  if (databaseUrl !== undefined && isPostgresUrl(databaseUrl))
    log.info('storing in PostgreSQL', { database: describeDatabaseUrl(databaseUrl) });
  const harness = await startHarness({
    config,
    dataDir: resolve(values['data-dir']),
    databaseUrl,
    commandsDir: values['commands-dir'] === undefined ? undefined : resolve(values['commands-dir']),
    host: values.host,
    port: port(values.port, '--port', 8080)!,
    grpcPort: port(values['grpc-port'], '--grpc-port'),
    log,
    auth: tokens ? { tokens } : undefined,
    logContent: values['log-content'] || process.env.TINY_HARNESS_LOG_CONTENT === '1',
    publicUrl,
  });
  process.stdout.write(`listening on ${harness.url}\n`);
  // What to do next, for whoever just started it: plain words on a terminal, a log line (JSON)
  // otherwise; standard output stays the one line scripts read.
  const commandsDir =
    values['commands-dir'] === undefined
      ? join(resolve(values['data-dir']), 'commands')
      : resolve(values['commands-dir']);
  if (process.stderr.isTTY) {
    process.stderr.write(
      `Open ${harness.url}/ in a browser, or chat in a terminal: tiny-harness chat ${harness.url}\n` +
        `Command files (*.md, one command each) are read from ${commandsDir}\n`,
    );
  } else {
    log.info('ready', { page: `${harness.url}/`, chat: `tiny-harness chat ${harness.url}`, commandsDir });
  }
  if (harness.grpcAddress) log.info(`gRPC on ${harness.grpcAddress}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('shutting down', { signal });
    // The close gives turns the grace, then closes what is left; should that hang, the stop still ends.
    setTimeout(() => {
      log.error('shutdown did not finish in time: exiting', { signal, graceMs: config.shutdownGraceMs });
      process.exit(1);
    }, config.shutdownGraceMs + CLOSE_MARGIN_MS).unref();
    harness.close().then(
      () => process.exit(0),
      (error) => {
        log.error('shutdown failed', { error: describeError(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

// The clients and the conformance kit are loaded by the subcommand that uses them: serving
// never needs them, and start-up is mostly module loading (bench/startup.ts).
async function clientTarget(
  url: string | undefined,
  headers: string[] = [],
): Promise<{ url: string; headers: Header[] }> {
  const { agentBaseUrl, parseHeader } = await import('./client/index.js');
  if (url === undefined)
    throw new UsageError("Give the agent's URL, e.g. http://127.0.0.1:8080. Run tiny-harness --help.");
  const base = agentBaseUrl(url);
  if ('problem' in base) throw new UsageError(base.problem);
  return {
    url: base.url,
    headers: headers.map((text) => {
      const header = parseHeader(text);
      if (typeof header === 'string') throw new UsageError(header);
      return header;
    }),
  };
}

async function chat(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: { header: { type: 'string', multiple: true }, task: { type: 'string' } },
  });
  if (positionals.length > 1) throw new UsageError('chat takes one URL: tiny-harness chat <url>.');
  const { runChat } = await import('./client/index.js');
  return runChat({ ...(await clientTarget(positionals[0], values.header)), taskId: values.task });
}

async function send(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: {
      header: { type: 'string', multiple: true },
      stream: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      task: { type: 'string' },
      context: { type: 'string' },
      wait: { type: 'boolean' },
      'no-wait': { type: 'boolean' },
    },
  });
  if (values.wait && values['no-wait']) throw new UsageError('Give --wait or --no-wait, not both.');
  const [url, ...words] = positionals;
  const target = await clientTarget(url, values.header);
  if (words.length === 0) throw new UsageError('Give the text to send: tiny-harness send <url> <text>.');
  // Waiting for sub-tasks is for a person at a terminal, unless asked either way.
  const wait = values.wait ?? (values['no-wait'] ? false : process.stdout.isTTY === true);
  const { runSend } = await import('./client/index.js');
  return runSend({
    ...target,
    text: words.join(' '),
    stream: values.stream,
    json: values.json,
    taskId: values.task,
    contextId: values.context,
    wait,
  });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const subcommands = ['serve', 'chat', 'send', 'conform'];
  if (subcommands.includes(command) && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'serve') {
    await serve(rest);
    return -1; // keeps running until a signal
  }
  if (command === 'chat') return chat(rest);
  if (command === 'send') return send(rest);
  if (command === 'conform') return (await import('./conform/command-line.js')).runConform(rest);
  const near = closestName(command, subcommands);
  throw new UsageError(
    `Unknown command "${command}"${near ? ` (did you mean ${near}?)` : ''}. Run tiny-harness --help.`,
  );
}

/** Every flag a subcommand takes, for "did you mean" on an unknown one. */
const FLAGS = [
  '--host',
  '--port',
  '--grpc-port',
  '--data-dir',
  '--database',
  '--commands-dir',
  '--config',
  '--tokens-file',
  '--log-content',
  '--public-url',
  '--header',
  '--task',
  '--stream',
  '--json',
  '--context',
  '--wait',
  '--no-wait',
  '--transport',
  '--only',
  '--command',
  '--allow-model',
  '--help',
  '--version',
];

/** Node's "Unknown option '--prot'" with the flag meant, when one is near. */
function unknownOptionHint(message: string): string {
  const typed = /Unknown option '(--?[^']+)'/.exec(message)?.[1];
  const near = typed && closestName(typed, FLAGS);
  return near ? ` (did you mean ${near}?)` : '';
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string })?.code?.startsWith?.('ERR_PARSE_ARGS')) {
      const hint = error instanceof UsageError ? '' : unknownOptionHint((error as Error).message);
      process.stderr.write(
        `tiny-harness: ${(error as Error).message}${hint}\n${error instanceof UsageError ? '' : 'Run tiny-harness --help.\n'}`,
      );
      process.exit(2);
    }
    if (isHarnessError(error)) {
      const hint = error.code === 'data_unusable' ? ' Choose another folder with --data-dir.' : '';
      process.stderr.write(`tiny-harness: ${error.message}${hint}\n`);
      process.exit(1);
    }
    if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      const taken = (error as { port?: number }).port;
      process.stderr.write(
        `tiny-harness: the port${taken === undefined ? '' : ` ${taken}`} is already in use; choose another with --port or --grpc-port (0 picks a free one).\n`,
      );
      process.exit(1);
    }
    process.stderr.write(`tiny-harness: could not start: ${describeError(error)}\n`);
    process.exit(1);
  },
);
