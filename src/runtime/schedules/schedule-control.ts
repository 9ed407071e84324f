import { randomBytes } from 'node:crypto';
import type { Task } from '@a2a-js/sdk';
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server';
import type { ScheduleControl, ScheduleRequest, ScheduleView } from '../../commands/index.js';
import { isHarnessError } from '../../errors.js';
import type { SchedulePushConfig, ScheduleRecords, ScheduleRun, StoredSchedule } from '../../schedule-ports.js';
import type { PushConfigs } from '../push-configs.js';
import type { TaskModels } from '../task-models.js';
import { newHookSecret } from './hook-secrets.js';
import { nextDue, nextDues, readWhen } from './schedule-times.js';

export interface ScheduleControlOptions {
  records: ScheduleRecords;
  models: Pick<TaskModels, 'modelFor'>;
  /** The most schedules one user may have (`schedules.maxPerUser`). */
  maxPerUser: number;
  /** The zone of a schedule that names none (`schedules.timeZone`). */
  timeZone: string;
  now: () => number;
  /** A hook's trigger URL: the harness's public address (`publicUrl`, else the one it listens on) and the hook's path. */
  hookUrl(id: string, secret: string): string;
  /** Checks a push config given with `/schedule` (`PushConfigs.check`); none: such a config is refused. */
  push?: Pick<PushConfigs, 'check'>;
  /** Told when a schedule was made or resumed: its due time may be the nearest (the scheduler's timer). */
  onChanged?: () => void;
}

/** `/schedule` and `/unschedule` on the store (issue 39): every call scoped to its caller's schedules. */
export class Schedules implements ScheduleControl {
  constructor(private readonly options: ScheduleControlOptions) {}

  async create(
    task: Task,
    request: ScheduleRequest,
    callContext: ServerCallContext,
  ): Promise<ScheduleView | { refused: string; code: string }> {
    const { now } = this.options;
    const timeZone = request.timeZone ?? this.options.timeZone;
    const createdMs = now();
    const read = readWhen(request.when, timeZone, createdMs);
    if ('problem' in read) return { refused: read.problem, code: 'when_invalid' };
    const times = { ...read, timeZone, createdMs };
    return this.add(task, request, callContext, { ...times, nextDueMs: nextDue(times, createdMs) });
  }

  async createHook(
    task: Task,
    request: Omit<ScheduleRequest, 'when' | 'timeZone'>,
    callContext: ServerCallContext,
  ): Promise<ScheduleView | { refused: string; code: string }> {
    const { secret, sha256 } = newHookSecret();
    const hook = { kind: 'hook' as const, spec: '', timeZone: this.options.timeZone, createdMs: this.options.now() };
    const made = await this.add(task, request, callContext, { ...hook, nextDueMs: undefined, hookSha256: sha256 });
    return 'refused' in made ? made : { ...made, url: this.options.hookUrl(made.id, secret) };
  }

  async rotateHook(id: string, callContext: ServerCallContext): Promise<ScheduleView | undefined> {
    const { records, hookUrl } = this.options;
    const { secret, sha256 } = newHookSecret();
    const rotated = await records.rotateHook(ownerOf(callContext), id, sha256);
    if (!rotated) return undefined;
    const latest = await records.latest([id]);
    return { ...this.view(rotated, latest.get(id) ?? {}), url: hookUrl(id, secret) };
  }

  /** Stores a schedule of the caller's, in the task's context with its model, within `maxPerUser` (hooks counted). */
  private async add(
    task: Task,
    request: Omit<ScheduleRequest, 'when' | 'timeZone'>,
    callContext: ServerCallContext,
    times: Pick<StoredSchedule, 'kind' | 'spec' | 'timeZone' | 'createdMs' | 'nextDueMs' | 'hookSha256'>,
  ): Promise<ScheduleView | { refused: string; code: string }> {
    const { records, models, maxPerUser } = this.options;
    const pushConfigs = await this.pushConfigs(request);
    if ('refused' in pushConfigs) return pushConfigs;
    const schedule: StoredSchedule = {
      id: `s${randomBytes(5).toString('hex')}`,
      ...ownerOf(callContext),
      authenticated: callContext.user?.isAuthenticated ?? false,
      contextId: task.contextId,
      originTaskId: task.id,
      newContext: request.newContext,
      model: await models.modelFor(task, callContext),
      prompt: request.prompt,
      ...times,
      paused: false,
      pushConfigs,
    };
    if (!(await records.add(schedule, maxPerUser)))
      return {
        refused: `You have ${maxPerUser} schedules, as many as one user may (schedules.maxPerUser, hooks counted): /unschedule one first.`,
        code: 'too_many',
      };
    this.options.onChanged?.();
    return this.view(schedule, {});
  }

  /** The push config the message carried, checked again here (the same check it passed on its way to its task). */
  private async pushConfigs(
    request: Pick<ScheduleRequest, 'pushConfig'>,
  ): Promise<SchedulePushConfig[] | { refused: string; code: string }> {
    const { push } = this.options;
    if (!request.pushConfig) return [];
    if (!push) return { refused: 'This server sends no push notifications.', code: 'push_not_supported' };
    try {
      return [await push.check(request.pushConfig)];
    } catch (error) {
      if (isHarnessError(error)) return { refused: error.message, code: 'params_invalid' };
      throw error;
    }
  }

  async list(callContext: ServerCallContext): Promise<ScheduleView[]> {
    const { records } = this.options;
    const schedules = await records.ofOwner(ownerOf(callContext));
    const latest = await records.latest(schedules.map((s) => s.id));
    return schedules.map((schedule) => this.view(schedule, latest.get(schedule.id) ?? {}));
  }

  remove(id: string, callContext: ServerCallContext): Promise<boolean> {
    return this.options.records.remove(ownerOf(callContext), id);
  }

  async setPaused(id: string, paused: boolean, callContext: ServerCallContext): Promise<ScheduleView | undefined> {
    const { records, now } = this.options;
    const who = ownerOf(callContext);
    const current = (await records.ofOwner(who)).find((s) => s.id === id);
    if (!current) return undefined;
    // Resumed, it goes on from now: the times that passed while it was paused are not run.
    const next = paused ? current.nextDueMs : nextDue(current, now() - 1);
    const updated = await records.setPaused(who, id, paused, next);
    if (!updated) return undefined;
    if (!paused) this.options.onChanged?.();
    const latest = await records.latest([id]);
    return this.view(updated, latest.get(id) ?? {});
  }

  private view(schedule: StoredSchedule, latest: { run?: ScheduleRun; skip?: ScheduleRun }): ScheduleView {
    const { run, skip } = latest;
    const next =
      schedule.nextDueMs === undefined || schedule.paused
        ? []
        : [schedule.nextDueMs, ...nextDues(schedule, schedule.nextDueMs, 2)];
    return {
      id: schedule.id,
      when: whenOf(schedule),
      timeZone: schedule.timeZone,
      prompt: schedule.prompt,
      paused: schedule.paused,
      newContext: schedule.newContext,
      next: next.map((ms) => new Date(ms).toISOString()),
      ...(run && { lastRun: { dueAt: new Date(run.dueMs).toISOString(), ...(run.taskId && { taskId: run.taskId }) } }),
      ...(skip && { lastSkip: { dueAt: new Date(skip.dueMs).toISOString(), missed: skip.missed } }),
      ...(schedule.pushConfigs.length > 0 && { webhooks: schedule.pushConfigs.length }),
    };
  }
}

function ownerOf(callContext: ServerCallContext): { tenant: string; owner: string } {
  return { tenant: callContext.tenant ?? '', owner: resolveUserScope(callContext) };
}

/** The schedule's `<when>` as the user wrote it. */
function whenOf(schedule: StoredSchedule): string {
  switch (schedule.kind) {
    case 'every':
      return `every ${everyText(Number(schedule.spec))}`;
    case 'at':
      return `at ${schedule.spec}`;
    case 'cron':
      return schedule.spec;
    case 'hook':
      return 'hook';
  }
}

function everyText(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  return `${ms / 60_000}m`;
}
