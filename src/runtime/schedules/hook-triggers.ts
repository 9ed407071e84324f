/**
 * A POST to a hook's trigger URL (issue 39, docs/schedules.md): the hook found by its id, the
 * secret checked against its stored SHA-256 in constant time, then a run claimed in the store
 * (keyed by the hook and the time of the POST, the body kept with the claim) and started by the
 * scheduler's own `launch`, as a due run is: a new task in the hook's context or a new one, as
 * its user, with its model, under the turn bound, as a trace of its own, counted by outcome.
 * Any instance takes the POST: the store has the hash. Unlike a due run, one that cannot start
 * now (the turn bound, a drain) is not kept waiting: its claim is removed and the caller, who is
 * there, is told to retry (503), so that POSTs cannot pile up runs no bound sees.
 */
import { randomUUID } from 'node:crypto';
import type { HookInput, ScheduleRecords, ScheduleRun } from '../../schedule-ports.js';
import { secretMatches } from './hook-secrets.js';
import type { Scheduler } from './scheduler.js';

export interface HookTriggersOptions {
  records: ScheduleRecords;
  scheduler: Pick<Scheduler, 'launch'>;
  instanceId: string;
  now: () => number;
  /** Told of each run a POST started (never the secret, nor the body). */
  onInfo(what: string, fields: Record<string, unknown>): void;
}

export class HookTriggers {
  constructor(private readonly options: HookTriggersOptions) {}

  async trigger(
    id: string,
    secret: string,
    input: HookInput | undefined,
  ): Promise<{ taskId: string } | { refused: 'not_found' | 'paused' }> {
    const { records, scheduler, instanceId, now, onInfo } = this.options;
    const hook = await records.get(id);
    // Compared even for no hook, against a hash that matches nothing: a miss takes the time a wrong secret does.
    if (!secretMatches(secret, hook?.kind === 'hook' ? hook.hookSha256 : undefined) || !hook)
      return { refused: 'not_found' };
    if (hook.paused) return { refused: 'paused' };
    const at = now();
    const run: ScheduleRun = {
      scheduleId: id,
      dueMs: at,
      state: 'claimed',
      instanceId,
      taskId: randomUUID(),
      claimedMs: at,
      missed: 1,
      ...(input !== undefined && { input }),
    };
    const claim = await records.claimHookRun(run);
    if ('refused' in claim) return { refused: claim.refused === 'paused' ? 'paused' : 'not_found' };
    try {
      const started = await scheduler.launch(hook, claim.claimed);
      onInfo('a hook started a run', { schedule: id, task: started.taskId });
      return { taskId: started.taskId };
    } catch (error) {
      // Not started: nothing of it is kept, and the caller is told why (turns_at_limit, instance_draining: retry).
      await records.unclaim(claim.claimed);
      throw error;
    }
  }
}
