import { join } from 'node:path';
import { CommandRegistry, registerBuiltinCommands } from './commands/index.js';
import { buildSchedules, type ScheduleParts } from './harness-schedules.js';
import { cardBuilder, type Endpoints } from './harness-card.js';
import { MessageClaims } from './a2a/index.js';
import { startInstructions, type ProjectInstructions } from './conversation/instructions.js';
import type { CommandFolder } from './file-commands/folder.js';
import type { HarnessOptions } from './harness-options.js';
import { describeError, type Logger } from './log.js';
import { REDISCOVERY_INTERVAL_MS, splitModelId, type ModelCatalog } from './models/catalog.js';
import { buildCatalog } from './models/discover.js';
import { buildRequestPath, type RequestPath } from './request-path.js';
import { CatalogGateway } from './runtime/catalog-gateway.js';
import { ClientStreams } from './runtime/client-streams.js';
import { earlierInContext } from './runtime/context-history.js';
import { ContextReports } from './runtime/context-report.js';
import { Forks } from './runtime/forks.js';
import { conversationRewinds } from './runtime/conversation-rewinds.js';
import { TaskEngine } from './runtime/engine.js';
import { HarnessExecutor } from './runtime/executor.js';
import { HOSTED_AGENT_MODELS, HostedAgent } from './runtime/hosted-agent.js';
import { endStateOf } from './runtime/turn/turn-end.js';
import { PushConfigs } from './runtime/push-configs.js';
import { deliveryRequest, PushDelivery, SHARED_PUSH_POLL_MS } from './runtime/push-delivery.js';
import { TurnRecovery } from './runtime/recovery.js';
import { ElicitationAnswers } from './runtime/elicitation-answers.js';
import { TaskView } from './runtime/subtask-metadata.js';
import { Subtasks } from './runtime/subtasks.js';
import { TaskModels } from './runtime/task-models.js';
import { TaskReports } from './runtime/task-reports.js';
import { toolApprovalControl } from './runtime/tool-approvals.js';
import { TurnLimit } from './runtime/turn/turn-limit.js';
import { TurnQueue } from './runtime/turn/turn-queue.js';
import { authenticatorOf, type Authenticator } from './server/authentication.js';
import { startCardSigner, type CardSigner } from './server/card-signing.js';
import { checkWebhookUrl, postWebhook } from './server/push-sender.js';
import { formatHost } from './server/listen.js';
import { configureTraces } from './telemetry/traces.js';
import { McpTools, openWorkspace } from './tools/index.js';
import { SkillsFolder, skillsCommand, withSkillServer, withSkillTool } from './skills/index.js';
import { AgentsFolder, agentsCommand, withAgentServer, withDelegateTool } from './agents/index.js';
import { Delegations } from './runtime/delegations.js';
import { startCommandSources } from './harness-commands.js';
import { meteredGateway, meteredTools, meteredTurns } from './telemetry/metered.js';
import type { MetricsSetup } from './telemetry/metrics-endpoint.js';
import type { Storage } from './harness-storage.js';

/**
 * The stages `startHarness` runs, in the order their data forces: each takes the records of the
 * stages it needs and returns its own. What a stage starts, the harness stops (`harness.ts`).
 */

/** The models offered, each task's choice among them, the tools of the MCP servers and the instruction files. */
export interface Models {
  catalog: ModelCatalog;
  taskModels: TaskModels;
  tools: McpTools;
  instructions: ProjectInstructions;
  /** The skills folder: the model's `skill` tool, `/skills` and `/<skill-name>` (docs/skills.md). */
  skills: SkillsFolder;
  /** The agents folder: the model's `delegate` tool and `/agents` (docs/agents.md). */
  agents: AgentsFolder;
  /** Stops asking again for providers that were down at start-up. */
  stopRediscovery(): void;
}

export async function startModels(options: HarnessOptions, { store }: Storage, log: Logger): Promise<Models> {
  const { config } = options;
  const catalog = await buildCatalog(config, options.env ?? process.env, { log: (line) => log.info(line) });
  const instructions = await startInstructions(config, log);
  const workspace = await openWorkspace(options, log);
  // Every turn's model, sub-tasks' included, may call the tools of every connected server.
  const tools = new McpTools({
    servers: config.mcpServers,
    env: options.env ?? process.env,
    toolTimeoutMs: config.toolTimeoutMs,
    elicitationTimeoutMs: config.elicitationTimeoutMs,
    connectWaitMs: config.mcpConnectWaitMs,
    toolOutputChars: config.toolOutputChars,
    log,
    logContent: options.logContent,
    builtin: workspace?.entries(),
  });
  // Providers whose servers were down at start-up are asked again every minute (and on demand).
  const rediscovery = setInterval(
    () => void catalog.rediscover(),
    options.rediscoveryIntervalMs ?? REDISCOVERY_INTERVAL_MS,
  ).unref();
  // Not awaited (it never rejects): each server's tools join the box when it answers (`npx` ones: 4 to 18 s).
  void tools.start();
  return {
    catalog,
    taskModels: new TaskModels(catalog, store.state),
    tools,
    instructions,
    skills: new SkillsFolder({ dir: options.skillsDir ?? join(options.dataDir, 'skills'), log }),
    agents: new AgentsFolder({ dir: options.agentsDir ?? join(options.dataDir, 'agents'), log }),
    stopRediscovery: () => clearInterval(rediscovery),
  };
}

/** The writer of tasks and runner of turns, and the view every part reads tasks through. */
export interface Engine {
  engine: TaskEngine;
  /** Tasks as clients see them: sub-task links shown in the metadata. */
  view: TaskView;
  recovery: TurnRecovery;
  /** The most turns in flight here, every turn counted. */
  turnLimit: TurnLimit;
  /** The runner of turns: what `/context` builds the next turn's request from. */
  executor: HarnessExecutor;
  /** The deliverer of push notifications here (docs/push.md). */
  push: PushDelivery;
  /** The tasks' queues of messages sent while a turn runs (spec/while-busy-extension-v1.md). */
  queue: TurnQueue;
  /** The log readers of clients' streams, which a drain closes. */
  streams: ClientStreams;
  compactor: HarnessExecutor['compactor'];
  /** What starts sub-tasks: commands, skills and the `delegate` tool. */
  subtasks: Subtasks;
}

export function startEngine(
  options: HarnessOptions,
  { store, coordination }: Storage,
  { catalog, taskModels, tools, instructions, skills, agents }: Models,
  { metrics }: MetricsSetup,
  log: Logger,
): Engine {
  const { config } = options;
  const turnLimit = new TurnLimit(config.maxTurnsInFlight);
  const view = new TaskView(store.tasks, store.state);
  const engine = new TaskEngine({
    coordination,
    store: store.tasks,
    view,
    feeds: store.feeds,
    subtasks: store.subtasks,
    links: store.state,
    limit: turnLimit,
    onError: (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
    onFenced: (task, epoch) =>
      log.warn(
        'a turn was fenced: another instance took its task over while this one stalled past its lease; the turn stopped and wrote nothing more',
        { task, epoch },
      ),
  });
  const subtasks = new Subtasks({
    engine,
    view,
    state: store.state,
    models: taskModels,
    offer: catalog,
    limit: turnLimit,
  });
  const delegations = new Delegations({
    starter: subtasks,
    tasks: { read: (id, context) => view.read(id, context), feeds: store.feeds },
    cancel: (id, context) => engine.cancel(id, context),
    outputChars: config.toolOutputChars,
    maxDepth: config.agents.maxDepth,
    onError: (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
  });
  const executor = new HarnessExecutor({
    models: taskModels,
    gateway: meteredGateway(new CatalogGateway(catalog, config.modelTimeoutMs, config.toolTimeoutMs), metrics),
    tools: meteredTools(
      withDelegateTool(
        withSkillTool(tools, () => skills.list(), config.toolOutputChars),
        () => agents.list(),
        delegations,
        config.agents,
      ),
      metrics,
    ),
    maxSteps: config.maxSteps,
    state: store.state,
    grants: store.grants,
    systemPrompt: config.systemPrompt,
    instructions: () => instructions.files(),
    contextCharsFor: (modelId) =>
      config.providers[splitModelId(modelId)?.provider ?? '']?.contextChars ?? config.contextChars,
    compact: { ...config.compact, timeoutMs: config.modelTimeoutMs },
    endState: endStateOf(config.turnEndState),
    earlier: (task, callContext) => earlierInContext(view, task, callContext),
    elicitations: { feeds: store.feeds, timeoutMs: config.elicitationTimeoutMs },
    onTurnError: (error, taskId) => log.warn('model turn failed', { task: taskId, error: describeError(error) }),
  });
  // A hosted agent takes the model loop's place; everything else of the engine stays as it is.
  const runner = options.agent
    ? new HostedAgent({
        agent: options.agent,
        timeoutMs: config.modelTimeoutMs,
        endState: endStateOf(config.turnEndState),
        onTurnError: (error, task) => log.warn('hosted agent turn failed', { task, error: describeError(error) }),
      })
    : executor;
  engine.runTurnsWith(meteredTurns(runner, metrics));
  const streams = new ClientStreams(store.feeds);
  const queue = new TurnQueue({
    engine,
    records: store.queue,
    view,
    feeds: streams,
    maxPerTask: config.queue.maxPerTask,
    onError: (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
  });
  // A turn's end runs the next message of its task's queue (draining, offers it to others: waited for).
  engine.onTurnReleased((taskId, queued) => void engine.track(queue.run(taskId, queued)));
  const { push: pushConfig } = config;
  const push = new PushDelivery({
    outbox: store.push,
    leases: coordination,
    send: (delivery, signal) =>
      postWebhook({
        url: delivery.config.url,
        ...deliveryRequest(delivery),
        timeoutMs: pushConfig.timeoutMs,
        allowPrivate: pushConfig.allowPrivateNetworks,
        signal,
      }),
    retry: pushConfig,
    // Shared, a dead instance's deliveries are found by looking; alone, everything is known here.
    pollMs: store.shared ? SHARED_PUSH_POLL_MS : undefined,
    log,
    onAttempt: (outcome) => metrics?.pushDelivery(outcome),
  });
  store.onPushOwed((taskId) => push.owed(taskId));
  push.start();
  const answers = new ElicitationAnswers({ engine, tasks: view, feeds: streams });
  return {
    engine,
    view,
    executor,
    turnLimit,
    push,
    queue,
    streams,
    compactor: executor.compactor,
    subtasks,
    recovery: new TurnRecovery({ engine, store: store.tasks, links: store.state, answers }),
  };
}

/** The commands, the request path every call goes down, and the turns the harness starts itself. */
export interface Commands {
  registry: CommandRegistry;
  requestPath: RequestPath;
  commandFolder: CommandFolder;
  /** Where the card's addresses are filled in once the transports are bound. */
  endpoints: Endpoints;
  authenticator?: Authenticator;
  /** Signs every card served (`card.signing`). */
  signer?: CardSigner;
  schedules?: ScheduleParts;
}

export async function startCommands(
  options: HarnessOptions,
  { store, coordination }: Storage,
  models: Models,
  engineParts: Engine,
  { metrics }: MetricsSetup,
  log: Logger,
): Promise<Commands> {
  const { config } = options;
  const { catalog, taskModels, tools, instructions, skills, agents } = models;
  const { engine, view, executor, recovery, queue, streams, compactor, subtasks } = engineParts;
  const authenticator = authenticatorOf(options.auth?.tokens, config.auth.oidc, log);
  // The card names the addresses, known only once the ports are bound: it is built on request.
  const endpoints: Endpoints = { httpUrl: `http://${formatHost(options.host)}:${options.port}` };
  const cardNow = cardBuilder(options, endpoints, authenticator, models);
  configureTraces({ agentName: cardNow().name, logContent: options.logContent === true });
  const registry = new CommandRegistry({ visibility: (command) => config.commands.visibility[command.name] }); // issue 38
  // One record of the messages each user sent, for commands and turns alike (CMD-34); none kept at 0.
  const claims =
    config.messageIdRetentionMs === 0
      ? undefined
      : new MessageClaims(store.claims, {
          onReusedId: (messageId) =>
            log.debug('a messageId came again with other content: handled as a new message', { messageId }),
        });
  // Every call, of every transport, goes down this one path (src/request-path.ts), checked (server/edge-schema.ts).
  const push = new PushConfigs({
    records: store.push,
    checkUrl: (url) => checkWebhookUrl(url, config.push.allowPrivateNetworks),
    bounds: { perTask: config.push.maxConfigsPerTask, perUser: config.push.maxConfigsPerUser },
  });
  const signer = await startCardSigner(config.card.signing, log);
  const requestPath = buildRequestPath({
    engine,
    view,
    feeds: streams,
    claims,
    registry,
    card: cardNow,
    log,
    push,
    queue,
    metrics,
    longPollMs: config.longPollMs,
    signer,
  });
  engine.onTurnEnd((end) => subtasks.ended(end.task, end.state, end.text, end.context));
  coordination.onOrphanedTurns(async (taskIds) => {
    metrics?.leasesTakenOver(taskIds.length);
    const recovered = await recovery.recoverTasks(taskIds);
    if (recovered > 0) log.warn('turns of an instance that stopped were ended as interrupted', { tasks: recovered });
    // The instance that would have run its queues and its claimed runs is gone: here, now.
    for (const taskId of taskIds) await queue.run(taskId);
    schedules?.scheduler.lookNow();
  });
  const scheduleParts = { store, coordination, engine, view, push, taskModels, metrics, endpoints };
  const schedules = buildSchedules(options, scheduleParts, log);
  const recovered = await recovery.recoverAtStart();
  if (recovered > 0) log.warn('tasks interrupted by an earlier stop were recovered', { tasks: recovered });
  await queue.runAll();

  let commandFolder: CommandFolder | undefined;
  // `/tools` lists the `skill` and `delegate` tools too, while there are skills and agents.
  const toolDirectory = withAgentServer(
    withSkillServer(tools, () => skills.list()),
    () => agents.list(),
  );
  const reportedModels = options.agent ? HOSTED_AGENT_MODELS : taskModels;
  registerBuiltinCommands(registry, {
    models: taskModels,
    reporter: new TaskReports(reportedModels, store.state, engine, view, store.push, queue),
    turns: { isRunning: (task) => engine.isBusy(task.id), stop: (task) => engine.stop(task.id) },
    skippedFiles: () => commandFolder?.skipped ?? [],
    subtasks,
    compaction: compactor,
    instructions,
    forks: new Forks({ view, models: taskModels, records: store.forks, engine }),
    context: new ContextReports(executor.requestInputs),
    rewinds: conversationRewinds,
    modelTurns: !options.agent,
    schedules: schedules?.control,
    tools:
      tools.configured && !options.agent
        ? { directory: toolDirectory, approvals: toolApprovalControl(engine, store.grants) }
        : undefined,
  });
  // With the built-ins, before the embedder's commands; a hosted agent has no model to give skills or sub-agents to.
  if (!options.agent) {
    registry.register(skillsCommand(skills));
    registry.register(
      agentsCommand({
        list: () => agents.list(),
        skipped: () => agents.skipped(),
        offeredModels: () => catalog.list().map((choice) => choice.id),
      }),
    );
  }
  options.commands?.(registry);
  commandFolder = await startCommandSources(options, models, engineParts, { registry, toolDirectory }, log);
  // Last: a start that fails before here leaves no timer reading a store that closes.
  schedules?.scheduler.start();
  return { registry, requestPath, commandFolder, endpoints, authenticator, signer, schedules };
}
