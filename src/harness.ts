import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { CommandRegistry, MessageClaims, registerBuiltinCommands, withoutCommandMetadata } from './commands/index.js';
import type { HarnessConfig } from './config/schema.js';
import { CommandFolder } from './file-commands/index.js';
import { describeError, silentLogger, type Logger } from './log.js';
import { splitModelId, type ModelCatalog } from './models/catalog.js';
import { buildCatalog } from './models/discover.js';
import { CatalogGateway } from './runtime/catalog-gateway.js';
import { TaskEngine } from './runtime/engine.js';
import { HarnessExecutor } from './runtime/executor.js';
import { McpTools } from './tools/index.js';
import type { Coordination } from './runtime/coordination.js';
import { LocalCoordination } from './runtime/local-coordination.js';
import { TurnRecovery } from './runtime/recovery.js';
import { withSubtaskLinks } from './runtime/subtask-metadata.js';
import { Subtasks } from './runtime/subtasks.js';
import { TaskModels } from './runtime/task-models.js';
import { TaskReports } from './runtime/task-reports.js';
import { toolApprovalControl } from './runtime/tool-approvals.js';
import { PromptCommands } from './runtime/prompt-commands.js';
import { earlierInContext } from './runtime/context-history.js';
import { TurnLimit } from './runtime/turn-limit.js';
import { TokenAuthenticator } from './server/auth.js';
import { baseAgentCard } from './server/card.js';
import type { RunningGrpcServer } from './server/grpc-server.js';
import { createHttpApp } from './server/http-app.js';
import { bundledWebDir } from './server/web-page.js';
import { openStore, type TaskEventLog } from './store/index.js';
import { buildRequestPath } from './request-path.js';
import { VERSION } from './version.js';

export interface HarnessOptions {
  config: HarnessConfig;
  dataDir: string;
  /** Store everything in this PostgreSQL database (shared with other instances) instead of SQLite in `dataDir`. May hold a password: never logged. */
  databaseUrl?: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Serve gRPC on this port too (0 picks a free one); no gRPC when absent. */
  grpcPort?: number;
  log?: Logger;
  /** Where provider keys are read from (default: the process environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Registers the embedder's own commands, after the built-ins. */
  commands?: (registry: CommandRegistry) => void;
  /** The folder of command files (`*.md`, one command each), watched while serving. Default: `<dataDir>/commands`. */
  commandsDir?: string;
  /** The largest request body accepted (default "4mb"). */
  bodyLimit?: string;
  /**
   * Bearer-token authentication: when given, every A2A call needs a token of `tokens`
   * (token → user name) and sees only its user's tasks; the card and the page stay public.
   */
  auth?: { tokens: ReadonlyMap<string, string> };
  /** Log the text of each message sent (debugging only; off by default). */
  logContent?: boolean;
  /** How often providers whose servers were down at start-up are asked again (default: a minute). */
  rediscoveryIntervalMs?: number;
  /** The base URL the card names for HTTP, when clients reach the harness through a proxy; over `config.publicUrl`. Checked by the caller (`publicUrlSchema`). */
  publicUrl?: string;
}

export interface RunningHarness {
  /** The HTTP base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** host:port of the gRPC server, when one runs. */
  grpcAddress?: string;
  registry: CommandRegistry;
  catalog: ModelCatalog;
  /** Stops serving: running turns end as interrupted, given `shutdownGraceMs` to store their end, then the store closes. */
  close(): Promise<void>;
}

/** Wires the harness together and starts serving: store, models, commands, runtime, transports. */
export async function startHarness(options: HarnessOptions): Promise<RunningHarness> {
  const log = options.log ?? silentLogger;
  const { config } = options;
  const authenticator = options.auth ? new TokenAuthenticator(options.auth.tokens) : undefined;
  // Named once: the message claims this instance makes carry it, and its coordination.
  const instanceId = randomUUID();
  const store = await openStore({
    instanceId,
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    cacheBytes: config.cacheBytes,
    durability: config.durability,
    messageIdRetentionMs: config.messageIdRetentionMs,
    onConnectionError: (error) =>
      log.warn('a database connection failed; the next query opens another', { error: describeError(error) }),
    // A transaction idle for a lease is a stopped process's, holding back the takeover of its turns.
    idleInTransactionMs: config.instanceLeaseMs,
    onPruneError: (error) => log.warn('pruning old message ids failed', { error: describeError(error) }),
  });
  let coordination: Coordination | undefined;
  let tools: McpTools | undefined;
  let rediscovery: NodeJS.Timeout | undefined;
  try {
    coordination = store.events
      ? await sharedCoordination(options.databaseUrl!, store.events, instanceId, config.instanceLeaseMs, log)
      : new LocalCoordination(instanceId);
    const engine = new TaskEngine({
      coordination,
      store: store.tasks,
      subtasks: store.subtasks,
      onError: (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
    });
    // A save of a task whose turn runs here is that turn's write, fenced by its lease (shared store).
    store.tasks.fenceTurns((taskId) => engine.turnOf(taskId)?.epoch);
    // Every part reads and writes tasks through this one view: sub-task links shown in the
    // metadata, the command reply keys kept out of it (CMD-6).
    const taskStore = withoutCommandMetadata(withSubtaskLinks(store.tasks, store.state));
    const recovery = new TurnRecovery({ engine, store: store.tasks, links: store.state });

    const catalog = await buildCatalog(config, options.env ?? process.env, { log: (line) => log.info(line) });
    // Providers whose servers were down at start-up are asked again every minute (and on demand).
    rediscovery = setInterval(
      () => void catalog.rediscover(),
      options.rediscoveryIntervalMs ?? REDISCOVERY_INTERVAL_MS,
    ).unref();
    const taskModels = new TaskModels(catalog, store.state);
    // Every turn's model, sub-tasks' included, may call the tools of every connected server.
    tools = new McpTools({
      servers: config.mcpServers,
      env: options.env ?? process.env,
      toolTimeoutMs: config.toolTimeoutMs,
      toolOutputChars: config.toolOutputChars,
      log,
      logContent: options.logContent,
    });
    await tools.start();
    const executor = new HarnessExecutor({
      engine,
      models: taskModels,
      gateway: new CatalogGateway(catalog, config.modelTimeoutMs, config.toolTimeoutMs),
      tools,
      maxSteps: config.maxSteps,
      state: store.state,
      systemPrompt: config.systemPrompt,
      contextCharsFor: (modelId) =>
        config.providers[splitModelId(modelId)?.provider ?? '']?.contextChars ?? config.contextChars,
      endState:
        config.turnEndState === 'completed' ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_INPUT_REQUIRED,
      earlier: (task, callContext) => earlierInContext(taskStore, task, callContext),
      onTurnError: (error, taskId) => log.warn('model turn failed', { task: taskId, error: describeError(error) }),
    });

    // The card names the addresses, known only once the ports are bound: it is built on request.
    const endpoints: { httpUrl: string; grpcAddress?: string } = {
      httpUrl: `http://${formatHost(options.host)}:${options.port}`,
    };
    const publicAddresses = {
      publicUrl: options.publicUrl ?? config.publicUrl,
      publicGrpcAddress: config.publicGrpcAddress,
    };
    const cardNow = () =>
      baseAgentCard({
        ...endpoints,
        ...publicAddresses,
        version: VERSION,
        bearerAuth: authenticator !== undefined,
        toolCalls: tools?.configured,
      });
    const registry = new CommandRegistry();
    // One record of the messages each user sent, for commands and turns alike (CMD-34).
    const claims = new MessageClaims(store.claims, {
      onReusedId: (messageId) =>
        log.debug('a messageId came again with other content: handled as a new message', { messageId }),
    });
    const turnLimit = new TurnLimit(config.maxTurnsInFlight);
    // Every call, of every transport, goes down this one path (src/request-path.ts). Requests
    // reach it checked against the edge schema by each transport (server/edge-schema.ts).
    const requestPath = buildRequestPath({
      engine,
      executor,
      taskStore,
      limit: turnLimit,
      claims,
      links: store.state,
      registry,
      card: cardNow,
      log,
    });
    const subtasks = new Subtasks({
      engine,
      taskStore,
      state: store.state,
      models: taskModels,
      offer: catalog,
      turns: requestPath.harnessTurns,
      limit: turnLimit,
      onStreamError: (error, task) => log.warn('a sub-task turn stream failed', { task, error: describeError(error) }),
    });
    engine.onTurnEnd((end) => subtasks.ended(end.task, end.state, end.text, end.context));
    coordination.onOrphanedTurns(async (taskIds) => {
      const recovered = await recovery.recoverTasks(taskIds);
      if (recovered > 0) log.warn('turns of an instance that stopped were ended as interrupted', { tasks: recovered });
    });
    const recovered = await recovery.recoverAtStart();
    if (recovered > 0) log.warn('tasks interrupted by an earlier stop were recovered', { tasks: recovered });

    let commandFolder: CommandFolder | undefined;
    registerBuiltinCommands(registry, {
      models: taskModels,
      reporter: new TaskReports(taskModels, store.state, engine, taskStore),
      turns: { isRunning: (task) => engine.isBusy(task.id), stop: (task) => engine.stop(task.id) },
      skippedFiles: () => commandFolder?.skipped ?? [],
      subtasks,
      tools: tools.configured
        ? { directory: tools, approvals: toolApprovalControl(requestPath.resumedTurns) }
        : undefined,
    });
    options.commands?.(registry);
    // After the built-ins and the embedder's commands, which no file may replace.
    commandFolder = new CommandFolder({
      dir: options.commandsDir ?? join(options.dataDir, 'commands'),
      registry,
      starter: subtasks,
      log,
    });
    await commandFolder.load();
    // After the command files: a prompt never takes a name a file has.
    new PromptCommands({ registry, source: tools, starter: subtasks, log }).start();

    const { handler } = requestPath;

    let grpc: RunningGrpcServer | undefined;
    if (options.grpcPort !== undefined) {
      // Loaded only when asked for: gRPC's libraries take a sizeable part of start-up.
      const { startGrpcServer } = await import('./server/grpc-server.js');
      grpc = await startGrpcServer(handler, options.host, options.grpcPort, { log, authenticator });
      endpoints.grpcAddress = grpc.address;
    }
    const httpServer = createServer();
    await listen(httpServer, options.host, options.port);
    const url = `http://${formatHost(options.host)}:${(httpServer.address() as AddressInfo).port}`;
    endpoints.httpUrl = url;
    httpServer.on(
      'request',
      createHttpApp({
        handler,
        card: requestPath.card,
        bodyLimit: options.bodyLimit ?? '4mb',
        log,
        webDir: bundledWebDir(),
        authenticator,
        logContent: options.logContent,
      }),
    );
    log.info(catalog.summary());
    if (publicAddresses.publicUrl) log.info('the card names the public address', { url: publicAddresses.publicUrl });
    if (authenticator) log.info('bearer-token authentication on', { users: authenticator.users().join(' ') });
    else if (isLoopback(options.host)) log.info('authentication off (no tokens configured)');
    else
      log.warn(
        'authentication off on a non-loopback address: anyone who reaches the port can use the agent; configure tokens',
        { host: options.host },
      );
    // Not awaited: serving does not wait for the first reload, which never rejects (failures are logged).
    void commandFolder.watch();

    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        clearInterval(rediscovery);
        await commandFolder.close();
        httpServer.close();
        // Turns end as interrupted; their last events and every reply under way get the grace to be stored.
        const left = await engine.drain(config.shutdownGraceMs);
        if (left.turns > 0 || left.writes > 0)
          log.warn('stopped before every turn stored its end; recovery ends those tasks when an instance next starts', {
            ...left,
            graceMs: config.shutdownGraceMs,
          });
        await tools?.close();
        httpServer.closeAllConnections();
        await grpc?.close();
        // With writes left, the database may never answer them: its connections are not waited for.
        const closingStore = store.close();
        if (left.writes === 0) await closingStore;
        else
          closingStore.catch((error: unknown) => log.warn('closing the store failed', { error: describeError(error) }));
      })());
    return { url, grpcAddress: grpc?.address, registry, catalog, close };
  } catch (error) {
    clearInterval(rediscovery);
    await tools?.close();
    await coordination?.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}

/** Providers whose servers were down at start-up are asked again this often. */
const REDISCOVERY_INTERVAL_MS = 60_000;

/** The coordination's own pool: its queries are single short statements (leases, events, heartbeats). */
const COORDINATION_CONNECTIONS = 5;

/**
 * What instances sharing the PostgreSQL database coordinate through. Loaded only then: one
 * process on SQLite needs none of it. It has a pool of its own, never the store's: the engine
 * asks it whether a turn holds a task from inside the store's transactions, where a second
 * connection of the store's pool may never come (see `PostgresCoordinationOptions.ownsDb`).
 */
async function sharedCoordination(
  url: string,
  events: TaskEventLog,
  instanceId: string,
  leaseMs: number,
  log: Logger,
): Promise<Coordination> {
  const [{ PostgresCoordination }, { openPostgresDatabase, withSessionSetting }] = await Promise.all([
    import('./store/postgres-coordination.js'),
    import('./store/postgres-database.js'),
  ]);
  // Its commits do not wait for the disk: leases and heartbeats are live state, which a crash of
  // the database server ends anyway; tasks and their events are written through the store's own
  // connections, durably.
  const db = await openPostgresDatabase(withSessionSetting(url, 'synchronous_commit', 'off'), {
    maxConnections: COORDINATION_CONNECTIONS,
    instanceId,
    idleInTransactionMs: leaseMs,
    onConnectionError: (error) =>
      log.warn('a database connection failed; the next query opens another', { error: describeError(error) }),
  });
  const coordination = new PostgresCoordination({
    db,
    ownsDb: true,
    url,
    events,
    instanceId,
    leaseMs,
    onError: (error, what) => log.warn(`instance coordination: ${what}`, { error: describeError(error) }),
  });
  try {
    await coordination.start();
  } catch (error) {
    await coordination.close().catch(() => undefined);
    throw error;
  }
  return coordination;
}

/**
 * Connections the OS may hold for the server before it accepts them. Node's default, 511, is
 * too few for a burst of clients while the event loop is busy: the rest are dropped and reset
 * after the kernel's retries (a 1,000-stream burst lost 20 to 40 streams that way). The OS
 * caps it at its own limit (net.core.somaxconn).
 */
const LISTEN_BACKLOG = 4096;

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
