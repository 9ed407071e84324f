/**
 * Schedules (issue 39, docs/schedules.md), wired: the commands' side (`Schedules`), the run
 * starter on the engine, the scheduler every instance runs, and the hooks' trigger URLs. Built
 * by `startCommands`, started once recovery has run, stopped first when the harness closes.
 */
import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { HarnessOptions } from './harness-options.js';
import { describeError, type Logger } from './log.js';
import type { TaskEngine } from './runtime/engine.js';
import type { PushConfigs } from './runtime/push-configs.js';
import { HookTriggers } from './runtime/schedules/hook-triggers.js';
import { Schedules } from './runtime/schedules/schedule-control.js';
import { ScheduleRuns } from './runtime/schedules/schedule-runs.js';
import { Scheduler } from './runtime/schedules/scheduler.js';
import type { TaskModels } from './runtime/task-models.js';
import type { Store } from './store/index.js';
import type { HarnessMetrics } from './telemetry/metrics.js';
import { HOOKS_PATH } from './server/hook-route.js';

export type { Scheduler };

/** Schedules' sides; the scheduler is started once recovery has run (`startCommands`); the hooks served by the HTTP app. */
export interface ScheduleParts {
  control: Schedules;
  scheduler: Scheduler;
  hooks: HookTriggers;
}

export function buildSchedules(
  options: HarnessOptions,
  parts: {
    store: Store;
    coordination: { readonly instanceId: string };
    engine: TaskEngine;
    view: { load(taskId: string, context: ServerCallContext): Promise<Task | undefined> };
    push: PushConfigs;
    taskModels: TaskModels;
    metrics: HarnessMetrics | undefined;
    /** Where the harness listens, filled in once it is bound: a hook's URL starts with it unless `publicUrl` is set. */
    endpoints: { httpUrl?: string };
  },
  log: Logger,
): ScheduleParts | undefined {
  const { config } = options;
  if (!config.schedules.enabled) return undefined;
  const { store, coordination, engine, view, push, taskModels, metrics, endpoints } = parts;
  const now = options.now ?? Date.now;
  const onError = (error: unknown, what: string, id?: string) =>
    log.warn(`${what} failed`, { schedule: id, error: describeError(error) });
  const runs = new ScheduleRuns({
    engine,
    setModel: (taskId, model) => store.state.setTaskModel(taskId, undefined, model),
    push,
    onError,
  });
  const scheduler = new Scheduler({
    records: store.schedules,
    runs,
    instanceId: coordination.instanceId,
    shared: store.shared,
    catchUpMs: config.schedules.catchUpMs,
    pollMs: config.schedules.pollMs,
    now,
    stateOf: async (taskId, context) => (await view.load(taskId, context))?.status?.state,
    onOutcome: (outcome, count) => metrics?.scheduleRun(outcome, count),
    onError,
    onInfo: (what, fields) => log.info(what, fields),
  });
  // A turn's end frees a place: a run waiting for one tries again (once the place is given back).
  engine.onTurnReleased(() => setImmediate(() => scheduler.placeFreed()));
  const control = new Schedules({
    records: store.schedules,
    models: taskModels,
    maxPerUser: config.schedules.maxPerUser,
    timeZone: config.schedules.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    now,
    // The address clients reach, as the card names it (behind a proxy, `publicUrl`).
    hookUrl: (id, secret) =>
      `${options.publicUrl ?? config.publicUrl ?? endpoints.httpUrl}${HOOKS_PATH}/${id}/${secret}`,
    push,
    onChanged: () => scheduler.rearm(),
  });
  const hooks = new HookTriggers({
    records: store.schedules,
    scheduler,
    instanceId: coordination.instanceId,
    keyKeptMs: config.schedules.hookKeyRetentionMs,
    now,
    onInfo: (what, fields) => log.info(what, fields),
  });
  return { control, scheduler, hooks };
}
