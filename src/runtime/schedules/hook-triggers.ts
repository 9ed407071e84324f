/**
 * A POST to a hook's trigger URL (issue 39, docs/schedules.md): the hook found by its id, the
 * secret checked against its stored SHA-256 in constant time, then a run claimed in the store
 * (keyed by the hook and the time of the POST, the body kept with the claim) and started by the
 * scheduler's own `launch`, as a due run is: a new task in the hook's context or a new one, as
 * its user, with its model, under the turn bound, as a trace of its own, counted by outcome.
 * Any instance takes the POST: the store has the hash. Unlike a due run, one that cannot start
 * now (the turn bound, a drain) is not kept waiting: its claim is removed and the caller, who is
 * there, is told to retry (503), so that POSTs cannot pile up runs no bound sees.
 *
 * A POST with an idempotency key claims its run with the key, which the store holds unique per
 * hook for `keyKeptMs`: a retry with it (on any instance, even while the first is being claimed)
 * starts nothing and is answered with the first run's task id, or refused if its body differs.
 */
import { randomUUID } from 'node:crypto';
import type { HookInput, ScheduleRecords, ScheduleRun } from '../../schedule-ports.js';
import { secretMatches } from './hook-secrets.js';
import type { Scheduler } from './scheduler.js';

export interface HookTriggersOptions {
  records: ScheduleRecords;
  scheduler: Pick<Scheduler, 'launch'>;
  instanceId: string;
  /** How long an idempotency key is kept (`schedules.hookKeyRetentionMs`). */
  keyKeptMs: number;
  now: () => number;
  /** Told of each run a POST started, and of each repeat (never the secret, nor the body). */
  onInfo(what: string, fields: Record<string, unknown>): void;
}

export class HookTriggers {
  constructor(private readonly options: HookTriggersOptions) {}

  async trigger(
    id: string,
    secret: string,
    input: HookInput | undefined,
    idempotencyKey?: string,
  ): Promise<HookOutcome> {
    const { records, scheduler, instanceId, keyKeptMs, now, onInfo } = this.options;
    const hook = await records.get(id);
    // Compared even for no hook, against a hash that matches nothing: a miss takes the time a wrong secret does.
    if (!secretMatches(secret, hook?.kind === 'hook' ? hook.hookSha256 : undefined) || !hook)
      return { refused: 'not_found' };
    // With a key, the claim tells: a retry of a run claimed before the hook was paused is answered with it.
    if (hook.paused && idempotencyKey === undefined) return { refused: 'paused' };
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
      ...(idempotencyKey !== undefined && { idempotencyKey }),
    };
    const claim = await records.claimHookRun(run, keyKeptMs);
    if ('refused' in claim) return { refused: claim.refused === 'paused' ? 'paused' : 'not_found' };
    if ('first' in claim) {
      // Its task id was chosen with its claim: the run it names is started, or being started.
      const taskId = claim.first.taskId!;
      if (!sameInput(claim.first.input, input)) return { refused: 'key_reused', taskId };
      onInfo('a hook POST repeated an idempotency key: answered with its first run', {
        schedule: id,
        task: taskId,
        idempotencyKey,
      });
      return { taskId, repeated: true };
    }
    try {
      const started = await scheduler.launch(hook, claim.claimed);
      onInfo('a hook started a run', { schedule: id, task: started.taskId, idempotencyKey });
      return { taskId: started.taskId };
    } catch (error) {
      // Not started: nothing of it is kept (its key neither), and the caller is told why (turns_at_limit, instance_draining: retry).
      await records.unclaim(claim.claimed);
      throw error;
    }
  }
}

/**
 * What a POST came to: a run started (`repeated`: by an earlier POST with the same idempotency
 * key), or refused; `key_reused`: the key's first POST had another body (its run named).
 */
export type HookOutcome =
  { taskId: string; repeated?: true } | { refused: 'not_found' | 'paused' } | { refused: 'key_reused'; taskId: string };

/** Whether a repeat carries the first POST's body: the same text, or the same JSON value (as stored, whitespace aside). */
function sameInput(first: HookInput | undefined, repeat: HookInput | undefined): boolean {
  return JSON.stringify(first ?? null) === JSON.stringify(repeat ?? null);
}
