import type { Scheduler } from './runtime/schedules/scheduler.js';
import type { Server } from 'node:http';
import type { CommandRegistry } from './commands/index.js';
import { startCommands, startEngine, startModels, type Commands, type Engine, type Models } from './harness-stages.js';
import { openStorage, type Storage } from './harness-storage.js';
import { startTransports } from './harness-transports.js';
import type { HarnessOptions } from './harness-options.js';
import { describeError, silentLogger } from './log.js';
import type { ProjectInstructions } from './conversation/instructions.js';
import type { ModelCatalog } from './models/catalog.js';
import { Readiness } from './server/health.js';
import { Admission } from './server/admission.js';
import { EventLoopDelay } from './server/event-loop-delay.js';
import { setUpMetrics } from './telemetry/metrics-endpoint.js';
import { METRICS_PATH } from './wire.js';

export type { HarnessOptions } from './harness-options.js';

export interface RunningHarness {
  /** The HTTP base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** host:port of the gRPC server, when one runs. */
  grpcAddress?: string;
  /** Where Prometheus scrapes the harness (`…/metrics`); none when `metrics.enabled` is off. */
  metricsUrl?: string;
  registry: CommandRegistry;
  catalog: ModelCatalog;
  /** The project's instruction files (config `instructions`), as read now and followed while serving. */
  instructions: ProjectInstructions;
  /**
   * Resolves once every MCP server has answered its first attempt to connect (connected or
   * failed); never rejects. Serving does not wait for it: turns meanwhile go on without the
   * tools of a server still connecting.
   */
  toolsAnswered(): Promise<void>;
  /**
   * Stops serving, draining first: at once `/readyz` answers 503, new turns are refused
   * (retryably) and streams not following a turn here end; the turns here get `drainTimeoutMs`
   * to finish, then those left end as interrupted, given `shutdownGraceMs` to store their end;
   * then the store closes.
   */
  close(): Promise<void>;
  /** Ends the drain's wait for running turns now (a second stop signal): true when it was waiting. */
  skipDrainWait(): boolean;
  /** The scheduler of `/schedule`'s runs (issue 39): `tick` looks for due runs now (tests with a fake clock). */
  scheduler?: Scheduler;
}

/**
 * Wires the harness together and starts serving, in stages (`harness-stages.ts`), each taking
 * the records of those before it that it needs: storage, models and tools, the engine, the
 * commands and the request path, the transports. If one fails, what the earlier ones started
 * is stopped.
 */
export async function startHarness(options: HarnessOptions): Promise<RunningHarness> {
  const log = options.log ?? silentLogger;
  const telemetry = setUpMetrics(options.config.metrics, options.env ?? process.env);
  const storage = await openStorage(options, telemetry, log);
  let models: Models | undefined;
  let engine: Engine | undefined;
  let closing: Promise<void> | undefined;
  /** Whether the drain waits for running turns now; a second stop ends the wait (`skipDrainWait`). */
  let waiting = false;
  const skipWait = new AbortController();
  const readiness = new Readiness({
    pingStore: () => storage.store.ping(),
    draining: () => closing !== undefined,
    log,
  });
  let eventLoopDelay: EventLoopDelay | undefined;
  let startedCommands: Commands | undefined;
  const admission = new Admission({
    ...options.config.admission,
    eventLoopDelayMs: () => eventLoopDelay?.ms ?? 0,
    onRefused: (reason) => {
      telemetry.metrics?.refused(reason);
      log.debug('call refused before it was read, retryably', { reason });
    },
  });
  try {
    models = await startModels(options, storage, log);
    engine = startEngine(options, storage, models, telemetry, log);
    const started = engine;
    const commands = await startCommands(options, storage, models, started, telemetry, log);
    startedCommands = commands;
    const transports = await startTransports(options, commands, telemetry, log, { readiness, admission });
    // Measured from here: the start's own work (loading, migrating) would read as a lagging loop.
    eventLoopDelay = new EventLoopDelay();
    // A hosted agent answers its turns itself: the models offered would mislead whoever reads the log.
    if (!options.agent) log.info(models.catalog.summary());
    const metricsUrl = transports.metricsServer?.url ?? (telemetry.metrics && `${transports.url}${METRICS_PATH}`);
    if (metricsUrl) log.info('metrics served', { url: metricsUrl, token: telemetry.token ? 'required' : 'none' });
    // Not awaited: serving does not wait for the first reload, which never rejects (failures are logged).
    void commands.commandFolder.watch();
    void models.skills.watch();
    void models.agents.watch();
    const close = () =>
      (closing ??= (async () => {
        const { httpServer, grpc } = transports;
        const { drainTimeoutMs, shutdownGraceMs } = options.config;
        // At once: new turns are refused, /readyz fails, and streams no turn here will end close.
        const finishing = started.engine.finishTurns(drainTimeoutMs, skipWait.signal);
        waiting = true;
        started.streams.closeAll((taskId) => !started.engine.runsHere(taskId));
        log.info('draining: new turns are refused; the running ones get time to finish', { drainTimeoutMs });
        models!.stopRediscovery();
        await commands.schedules?.scheduler.stop();
        await commands.commandFolder.close();
        await models!.skills.close();
        await models!.agents.close();
        await models!.instructions.close();
        // Queued messages wait in the store; a task given back with messages waiting is offered to other instances.
        await started.queue.stop();
        const finished = await finishing;
        waiting = false;
        if (!finished) log.warn('turns still running after the drain: they end as interrupted', { drainTimeoutMs });
        // Turns left end as interrupted; their last events and every reply under way get the grace to be stored.
        const left = await started.engine.drain(shutdownGraceMs);
        if (left.turns > 0 || left.writes > 0)
          log.warn('stopped before every turn stored its end; recovery ends those tasks when an instance next starts', {
            ...left,
            graceMs: shutdownGraceMs,
          });
        // Every stream ends now: a turn's with its final status, a client's for it to resume elsewhere.
        started.streams.closeAll();
        await started.push.stop();
        await models!.tools.close();
        await Promise.all([stopListening(httpServer), grpc?.close(), transports.metricsServer?.close()]);
        // With writes left, the database may never answer them: its connections are not waited for.
        const closingStore = storage.store.close();
        if (left.writes === 0) await closingStore;
        else
          closingStore.catch((error: unknown) => log.warn('closing the store failed', { error: describeError(error) }));
        eventLoopDelay?.stop();
      })());
    return {
      url: transports.url,
      grpcAddress: transports.grpc?.address,
      metricsUrl,
      registry: commands.registry,
      catalog: models.catalog,
      instructions: models.instructions,
      toolsAnswered: () => models!.tools.start(),
      close,
      scheduler: commands.schedules?.scheduler,
      skipDrainWait: () => {
        if (!waiting) return false;
        skipWait.abort();
        return true;
      },
    };
  } catch (error) {
    eventLoopDelay?.stop();
    await startedCommands?.schedules?.scheduler.stop();
    await engine?.push.stop();
    await stopStarted(storage, models);
    throw error;
  }
}

/** How long the responses under way get to be written (streams that just ended) before the connections are cut. */
const RESPONSES_END_MS = 2000;

/** Stops taking connections; those left open after `RESPONSES_END_MS` are cut. */
function stopListening(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), RESPONSES_END_MS);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
  });
}

/** What a start that failed midway had started, stopped. */
async function stopStarted(storage: Storage, models: Models | undefined): Promise<void> {
  models?.stopRediscovery();
  await models?.instructions.close();
  await models?.tools.close();
  await storage.coordination.close().catch(() => undefined);
  await storage.store.close();
}
