/**
 * `tiny-harness serve`: starts the harness with the flags the command line parsed, says where
 * it listens and what to do next, and stops it cleanly on SIGINT or SIGTERM, draining first (a second signal ends the drain's wait). Everything it
 * needs is loaded here when it runs, so the clients start without the server.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import type { CardIdentity } from './server/card.js';
import { createLogger, describeError, routeConsoleToLog } from './log.js';
import { tracingRequested } from './telemetry/tracing-env.js';

/** The flags of `serve`, as cli.ts defines them. */
export interface ServeFlags {
  host: string;
  port: number;
  grpcPort?: number;
  dataDir: string;
  database?: string;
  commandsDir?: string;
  skillsDir?: string;
  agentsDir?: string;
  config?: string;
  tokensFile?: string;
  publicUrl?: string;
  logContent?: boolean;
  /** A module whose default export is an `AgentExecutor`, run in the model loop's place. */
  agent?: string;
}

/** A flag the harness refuses; the command line answers it as bad usage. */
export class ServeFlagError extends Error {}

/**
 * The `AgentExecutor` a module exports by default (an instance, or a class constructed without
 * arguments), and what its `card` export says of it (name, description, skills), the module's
 * path taken from the working directory. A file missing, failing to load, or exporting anything
 * else is a flag error that names the file, never a stack trace.
 */
export async function loadAgent(path: string): Promise<{ agent: AgentExecutor; card: CardIdentity }> {
  const file = resolve(path);
  if (!existsSync(file)) throw new ServeFlagError(`--agent ${path}: no such file.`);
  let exported: { default?: unknown; card?: unknown };
  try {
    exported = (await import(pathToFileURL(file).href)) as typeof exported;
  } catch (error) {
    throw new ServeFlagError(`--agent ${path}: the module failed to load: ${describeError(error)}`);
  }
  const agent = isAgentClass(exported.default) ? new exported.default() : exported.default;
  if (!isAgentExecutor(agent))
    throw new ServeFlagError(
      `--agent ${path}: its default export is not an AgentExecutor of @a2a-js/sdk (an object with execute and cancelTask methods, or a class of one).`,
    );
  const { cardIdentity } = await import('./server/card.js');
  const card = cardIdentity(exported.card);
  if ('problem' in card) throw new ServeFlagError(`--agent ${path}: its card export is not a card: ${card.problem}.`);
  return { agent, card };
}

function isAgentExecutor(value: unknown): value is AgentExecutor {
  const candidate = value as Partial<AgentExecutor> | undefined;
  return typeof candidate?.execute === 'function' && typeof candidate.cancelTask === 'function';
}

function isAgentClass(value: unknown): value is new () => AgentExecutor {
  return typeof value === 'function' && typeof (value.prototype as Partial<AgentExecutor>)?.execute === 'function';
}

/** What a stop may take beyond `drainTimeoutMs` and `shutdownGraceMs`: closing the transports, the tools and the store. */
const CLOSE_MARGIN_MS = 5000;

export async function serve(flags: ServeFlags): Promise<void> {
  const [
    { loadConfig },
    { startHarness },
    { loadTokens },
    { checkPublicAddress, publicUrlSchema },
    { describeDatabaseUrl, isPostgresUrl },
    { UnavailableError },
  ] = await Promise.all([
    import('./config/load.js'),
    import('./harness.js'),
    import('./server/auth-tokens.js'),
    import('./config/public-url.js'),
    import('./store/database-url.js'),
    import('./server/unavailable.js'),
  ]);
  let publicUrl: string | undefined;
  if (flags.publicUrl !== undefined) {
    const checked = checkPublicAddress(publicUrlSchema, flags.publicUrl);
    if ('problem' in checked) throw new ServeFlagError(`--public-url ${checked.problem}.`);
    publicUrl = checked.value;
  }
  const log = createLogger({ level: process.env.TINY_HARNESS_LOG_LEVEL === 'debug' ? 'debug' : 'info' });
  // A retryable refusal the SDK prints is an answer, not a failure: debug (the metrics count it).
  routeConsoleToLog(log, (arg) => arg instanceof UnavailableError);
  // OpenTelemetry's SDK is loaded only when the standard variables ask for traces (docs/operations.md).
  const tracing = tracingRequested(process.env)
    ? (await import('./telemetry/tracing-sdk.js')).startTracing({ log })
    : undefined;
  const hosted = flags.agent === undefined ? undefined : await loadAgent(flags.agent);
  const config = await loadConfig(flags.config);
  const tokens = await loadTokens({
    env: process.env,
    file: flags.tokensFile === undefined ? undefined : resolve(flags.tokensFile),
  });
  // The flag wins over TINY_HARNESS_DATABASE_URL (an empty one is none); the URL may hold a
  // password, so only its host and database are logged.
  const databaseUrl = flags.database || undefined;
  if (databaseUrl !== undefined && isPostgresUrl(databaseUrl))
    log.info('storing in PostgreSQL', { database: describeDatabaseUrl(databaseUrl) });
  const dataDir = resolve(flags.dataDir);
  const commandsDir = flags.commandsDir === undefined ? undefined : resolve(flags.commandsDir);
  const skillsDir = flags.skillsDir === undefined ? undefined : resolve(flags.skillsDir);
  const agentsDir = flags.agentsDir === undefined ? undefined : resolve(flags.agentsDir);
  const harness = await startHarness({
    config,
    dataDir,
    databaseUrl,
    commandsDir,
    skillsDir,
    agentsDir,
    host: flags.host,
    port: flags.port,
    grpcPort: flags.grpcPort,
    log,
    auth: tokens ? { tokens } : undefined,
    logContent: flags.logContent === true || process.env.TINY_HARNESS_LOG_CONTENT === '1',
    publicUrl,
    agent: hosted?.agent,
    agentCard: hosted?.card,
  });
  process.stdout.write(`listening on ${harness.url}\n`);
  // What to do next, for whoever just started it: plain words on a terminal, a log line (JSON)
  // otherwise; standard output stays the one line scripts read.
  const commandsFolder = commandsDir ?? join(dataDir, 'commands');
  if (process.stderr.isTTY) {
    process.stderr.write(
      `Open ${harness.url}/ in a browser, or chat in a terminal: npx tiny-harness chat ${harness.url}\n` +
        `Command files (*.md, one command each) are read from ${commandsFolder}\n`,
    );
  } else {
    log.info('ready', {
      page: `${harness.url}/`,
      chat: `npx tiny-harness chat ${harness.url}`,
      commandsDir: commandsFolder,
    });
  }
  if (harness.grpcAddress) log.info(`gRPC on ${harness.grpcAddress}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal while running turns get their drain time: they end as interrupted now.
      if (harness.skipDrainWait()) {
        log.warn('second signal: running turns end as interrupted now', { signal });
        return;
      }
      log.warn('another signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('shutting down', { signal });
    // The close drains, gives turns left the grace, then closes what is left; should that hang, the stop still ends.
    const boundMs = config.drainTimeoutMs + config.shutdownGraceMs + CLOSE_MARGIN_MS;
    setTimeout(() => {
      log.error('shutdown did not finish in time: exiting', { signal, boundMs });
      process.exit(1);
    }, boundMs).unref();
    harness
      .close()
      .then(() => tracing?.shutdown())
      .then(
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
