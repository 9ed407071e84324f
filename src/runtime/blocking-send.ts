import type { Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import { DEFAULT_ANSWER_HISTORY } from '../commands/index.js';
import { DelegatingRequestHandler } from '../a2a/index.js';

/**
 * Runs a blocking `SendMessage` as a stream that nobody sees, and answers with the stored task
 * at its end, or with the agent's message if it answered with one. The task carries the history
 * the request's `historyLength` asks for; unset, the message sent and the reply, as a command's
 * answer does (`DEFAULT_ANSWER_HISTORY`).
 *
 * Why: the SDK's own blocking path deep-copies the whole task after every event, for push
 * notifications, even when they are off (this harness offers none). A turn's reply comes in
 * many chunks, so on a long conversation each chunk cost as much as copying the conversation:
 * 45% of the server's CPU, plus garbage collection, in a profile of turns on a
 * 10,000-message task. Its streaming path stores the same events without that copy.
 *
 * A send with `returnImmediately` is answered after the stream's first event (the task stored),
 * as the SDK answers it, and the rest of the stream is read in the background: that way every
 * turn is a stream, which a shutdown can wait for (`TrackedTurns`).
 */
export class BlockingSendAsStream extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    /** Told about an error of a stream read on after its answer was sent; nobody else hears of it. */
    private readonly onStreamError: (error: unknown) => void,
  ) {
    super(inner);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const stream = this.inner.sendMessageStream(params, context);
    if (params.configuration?.returnImmediately) {
      const first = await stream.next();
      void (async () => {
        while (!(await stream.next()).done);
      })().catch(this.onStreamError);
      const payload = first.done ? undefined : first.value.payload;
      if (payload?.$case === 'message') return payload.value;
      const taskId =
        payload?.$case === 'task'
          ? payload.value.id
          : payload?.$case === 'statusUpdate' || payload?.$case === 'artifactUpdate'
            ? payload.value.taskId
            : undefined;
      if (!taskId) throw new A2AError('Agent execution finished without a result, and no task context found.');
      return this.inner.getTask(
        {
          tenant: params.tenant,
          id: taskId,
          historyLength: params.configuration?.historyLength ?? DEFAULT_ANSWER_HISTORY,
        },
        context,
      );
    }
    let taskId: string | undefined;
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === 'message') return payload.value;
      if (payload?.$case === 'task') taskId ??= payload.value.id;
      else if (payload?.$case === 'statusUpdate' || payload?.$case === 'artifactUpdate')
        taskId ??= payload.value.taskId;
    }
    // The SDK's words for the same case, so that a client sees no difference.
    if (!taskId) throw new A2AError('Agent execution finished without a result, and no task context found.');
    return this.inner.getTask(
      {
        tenant: params.tenant,
        id: taskId,
        historyLength: params.configuration?.historyLength ?? DEFAULT_ANSWER_HISTORY,
      },
      context,
    );
  }
}
