/**
 * The `generations` step: A2A 1.1's rules on the task's generation (issue 36;
 * spec/stream-resume-extension-v1.md, "A2A 1.1 generations"). The binding reads the fields
 * from the wire and puts them on the call's params (`a2a/version-fields.ts`, `version-proto.ts`):
 * - `GetTask` with `currentGeneration` waits until the task's generation is past it, the client
 *   goes away, or `maxWaitMs` has passed; then the task is answered as it stands;
 * - `ifGenerationMatch` on a send goes down to the engine, which refuses the turn under the
 *   task's lease when the task has moved on (`TaskEngine.startTurn`, `ifGeneration`).
 * A call of another version goes through with neither field: a 1.0 client sees what it always saw.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { clientGoneSignal, type Call, type GenerationParams, type Step } from '../a2a/index.js';
import type { LogSubscription, TaskSnapshot } from '../ports.js';
import { GENERATIONS_VERSION } from '../wire.js';

export interface GenerationsStepOptions {
  /** The task as the caller sees it, with its generation; undefined: not found (the call below says so). */
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  /** The readers of task logs, on any instance (`Store.feeds`). */
  feeds: { follow(taskId: string): Promise<LogSubscription> };
  /** The longest a `GetTask` waits for the generation to pass `currentGeneration` (`longPollMs`). */
  maxWaitMs: number;
}

export function generationsStep(options: GenerationsStepOptions): Step {
  return {
    name: 'generations',
    methods: ['getTask', 'sendMessage', 'sendMessageStream'],
    around(call, next) {
      const fields = call.params as GenerationParams;
      if (fields.currentGeneration === undefined && fields.ifGenerationMatch === undefined) return next();
      if (call.context.requestedVersion !== GENERATIONS_VERSION) return next(withoutGenerationFields(call));
      if (call.method !== 'getTask' || fields.currentGeneration === undefined) return next();
      const after = fields.currentGeneration;
      return waitPast(options, call.params.id, after, call.context).then(() => next());
    },
  };
}

/** The call with the 1.1 fields left out of its params. */
function withoutGenerationFields(call: Call): Call {
  const { currentGeneration: _current, ifGenerationMatch: _match, ...params } = call.params as GenerationParams;
  return { ...call, params } as Call;
}

/**
 * Resolves once the task's generation is past `after`: at once when it is already, or the task
 * is not found (the call below refuses it), else on the first event after it, on whichever
 * instance it is written. Resolves too at the bound, when the client goes away, or when the
 * task's feed ends: the task is then answered as it stands, as the draft lets a server do.
 */
async function waitPast(
  options: GenerationsStepOptions,
  taskId: string,
  after: number,
  context: ServerCallContext,
): Promise<void> {
  // Following before reading: an event written between the two is not missed.
  const subscription = await options.feeds.follow(taskId);
  const signal = clientGoneSignal(context);
  const stop = () => subscription.close();
  const timer = setTimeout(stop, options.maxWaitMs);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const snapshot = await options.read(taskId, context);
    if (!snapshot || snapshot.generation > after || signal?.aborted) return;
    for (;;) {
      const entry = await subscription.next();
      if (!entry || entry.generation > after) return;
    }
  } catch {
    // The feed failed (the instance drains, the store is gone): the task as it stands is the answer.
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
    subscription.close();
  }
}
