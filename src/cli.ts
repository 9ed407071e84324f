#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadConfig } from './config/load.js';
import { isHarnessError } from './errors.js';
import { startHarness } from './harness.js';
import { createLogger, describeError, routeConsoleToLog } from './log.js';
import { VERSION } from './version.js';

const USAGE = `tiny-harness ${VERSION}: an A2A 1.0 agent harness with slash commands

Usage:
  tiny-harness serve [--host H] [--port P] [--grpc-port G] [--data-dir DIR] [--commands-dir DIR] [--config FILE]
  tiny-harness --help | --version

serve options:
  --host H        address to listen on (default 127.0.0.1)
  --port P        HTTP port for JSON-RPC, HTTP+JSON and the agent card; 0 picks a free one (default 8080)
  --grpc-port G   also serve gRPC on this port; 0 picks a free one (default: no gRPC)
  --data-dir DIR  where tasks are stored (default ./.tiny-harness)
  --commands-dir DIR
                  command files (*.md, one command each), watched while serving
                  (default <data dir>/commands)
  --config FILE   JSON configuration: models, providers, system prompt (see the README)

Model keys come from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY, or the
variable a provider names with "apiKeyEnv" in the config file.`;

class UsageError extends Error {}

function port(value: string | undefined, flag: string, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535, not "${value}".`);
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
      'commands-dir': { type: 'string' },
      config: { type: 'string' },
    },
  });
  const log = createLogger();
  routeConsoleToLog(log);
  const config = await loadConfig(values.config);
  const harness = await startHarness({
    config,
    dataDir: resolve(values['data-dir']),
    commandsDir: values['commands-dir'] === undefined ? undefined : resolve(values['commands-dir']),
    host: values.host,
    port: port(values.port, '--port', 8080)!,
    grpcPort: port(values['grpc-port'], '--grpc-port'),
    log,
  });
  process.stdout.write(`listening on ${harness.url}\n`);
  if (harness.grpcAddress) log.info(`gRPC on ${harness.grpcAddress}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('shutting down', { signal });
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
  if (command === 'serve') {
    await serve(rest);
    return -1; // keeps running until a signal
  }
  throw new UsageError(`Unknown command "${command}". Run tiny-harness --help.`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string })?.code?.startsWith?.('ERR_PARSE_ARGS')) {
      process.stderr.write(`tiny-harness: ${(error as Error).message}\n${error instanceof UsageError ? '' : 'Run tiny-harness --help.\n'}`);
      process.exit(2);
    }
    if (isHarnessError(error)) {
      process.stderr.write(`tiny-harness: ${error.message}\n`);
      process.exit(1);
    }
    if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      process.stderr.write('tiny-harness: the port is already in use; choose another with --port (0 picks a free one).\n');
      process.exit(1);
    }
    process.stderr.write(`tiny-harness: could not start: ${describeError(error)}\n`);
    process.exit(1);
  },
);
