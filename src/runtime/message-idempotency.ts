import type { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { FirstClaim, MessageClaims, Next, RepeatClaim, Step, Stream } from '../a2a/index.js';
import { answerBlocking } from './request-handler.js';
import { followTask, type FollowTarget } from './task-follower.js';

export interface MessageIdempotencyOptions {
  /** Where a resend follows the task its message went to. */
  tasks: FollowTarget;
  /** The same claims the commands wrapper uses: one record of handled message ids (CMD-34). */
  claims: MessageClaims;
  /** The stream of a message still waiting in its task's queue (`TurnQueue.followQueued`); undefined once it left it. */
  queued?: (
    taskId: string,
    messageId: string,
    context: ServerCallContext,
  ) => Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined>;
  /** Told when a claim could not be recorded as accepted; the turn goes on regardless. */
  onClaimError?: (error: unknown, taskId: string) => void;
}

/**
 * The `idempotency` step. Turns are run once per message id and user (CMD-34); commands are kept the same way by the
 * commands wrapper, with the same claims. The first send of an id runs its turn; the message
 * counts as accepted at the stream's first event, when the engine has stored it on its task. A
 * send refused before that (task not found, a turn already running) frees the id again.
 *
 * A resend with the same content gets the task it went to, as it stands now. While that
 * turn still runs, a streaming resend follows it to its end, as `SubscribeToTask` would: a
 * client that resends `SendStreamingMessage` after losing its connection expects the stream it
 * lost (the rest of the turn, ending when the task waits for input), not a snapshot of a
 * WORKING task that leaves it to poll. A blocking send is claimed as a stream too, and answered
 * from it (`answerBlocking`): a blocking resend likewise answers once the turn has ended, as the
 * first send does. Sits in front of the engine, which would refuse a resend as busy.
 */
export function idempotencyStep(options: MessageIdempotencyOptions): Step {
  return {
    name: 'idempotency',
    methods: ['sendMessage', 'sendMessageStream'],
    around(call, next) {
      if (call.method !== 'sendMessage' && call.method !== 'sendMessageStream') return next();
      const { params, context } = call;
      const stream = claimed(options, params, context, next);
      if (call.method === 'sendMessageStream') return stream;
      // A blocking send, claimed as a streaming one is: answered from its stream, and the task
      // then read below this step, not down the whole path again.
      return answerBlocking(stream, params, context, (p, c) =>
        next({ method: 'getTask', params: p, context: c, streaming: false }),
      );
    },
  };
}

/** The message's events, its id claimed first: the turn below, or what a resend follows. */
async function* claimed(
  options: MessageIdempotencyOptions,
  params: SendMessageRequest,
  context: ServerCallContext,
  next: Next,
): Stream {
  const turn = () => next({ method: 'sendMessageStream', params, context, streaming: true });
  if (!params.message) return yield* turn();
  const claim = await options.claims.claim(params.message, context);
  if (claim.kind === 'repeat') return yield* resend(options, claim, params, context);
  let accepted = false;
  try {
    for await (const event of turn()) {
      if (!accepted) {
        accepted = true;
        const taskId = taskIdOf(event);
        if (taskId) await accept(options, claim, taskId);
      }
      yield event;
    }
  } catch (error) {
    if (!accepted) await claim.release();
    throw error;
  } finally {
    claim.finish();
  }
}

/**
 * Never throws: the turn is running, and its client reads on. A claim not recorded is
 * reported; after a restart its message would be taken as new.
 */
async function accept(options: MessageIdempotencyOptions, claim: FirstClaim, taskId: string): Promise<void> {
  try {
    await claim.accept({ taskId });
  } catch (error) {
    options.onClaimError?.(error, taskId);
  }
}

async function* resend(
  options: MessageIdempotencyOptions,
  claim: RepeatClaim,
  params: SendMessageRequest,
  context: ServerCallContext,
): Stream {
  // A message still queued: the resend waits for its turn as the first send does.
  const queued = await options.queued?.(claim.outcome.taskId, params.message!.messageId, context);
  if (queued) return yield* queued;
  // A resend reaching another instance than the first send finds the claim there, not the
  // request: it follows the task's turn if one is running, wherever it runs.
  const following = claim.inFlight || (await options.tasks.isBusy(claim.outcome.taskId)) ? 'turn' : 'none';
  yield* followTask(options.tasks, claim.outcome.taskId, context, {
    follow: following,
    refuseEnded: false,
    historyLength: params.configuration?.historyLength,
  });
  // Ending once the first request is over, the client's next read (and a blocking answer) sees the turn's end.
  if (following === 'turn') await claim.firstDone;
}

function taskIdOf(event: StreamResponse): string | undefined {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
    case 'message':
      return payload.value.taskId || undefined;
    default:
      return undefined;
  }
}
