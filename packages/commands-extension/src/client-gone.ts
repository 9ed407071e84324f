import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * What a stream held for a client does when that client goes away (its connection closed, its
 * gRPC call cancelled). The SDK's transports notice only when the next event is written, and an
 * idle task may have no next event for hours: a dropped `SubscribeToTask` then kept its
 * listener, its queue and the response for as long (16.5 MB per thousand, and a
 * `MaxListenersExceededWarning` after ten). So each call carries a signal in its context's
 * `state`: the transport gives it (`setClientGoneSignal`), and the streams here end on it at
 * once. Without one, a stream simply runs to its end.
 */

/** The `ServerCallContext.state` key of the call's "client gone" `AbortSignal`. */
export const CLIENT_GONE_KEY = 'tiny-harness/client-gone';

/** The signal that fires when the caller goes away, if the transport gave one. */
export function clientGoneSignal(context: ServerCallContext | undefined): AbortSignal | undefined {
  const given = context?.state.get(CLIENT_GONE_KEY);
  if (typeof given !== 'function') return given instanceof AbortSignal ? given : undefined;
  const signal = (given as () => AbortSignal)();
  context!.state.set(CLIENT_GONE_KEY, signal);
  return signal;
}

/**
 * Gives a call its "client gone" signal; for transports (and tests that play one). A function
 * makes the signal when first asked, already fired if the client is gone by then: most calls
 * (a command, a `GetTask`) never ask, and a signal, its listener and its firing at the end of
 * every call were a tenth of a command's CPU.
 */
export function setClientGoneSignal(context: ServerCallContext, signal: AbortSignal | (() => AbortSignal)): void {
  context.state.set(CLIENT_GONE_KEY, signal);
}

/**
 * The client's view of a turn's stream, which ends as soon as the client goes away. The turn's
 * own stream cannot simply be ended: the SDK stores a turn's events while its stream is read,
 * so it is read on, in the background, to its end; the turn goes on and is stored, and only
 * what the client held (the response, the transport's loop) is released at once. Errors of that
 * background reading, which nobody waits for any more, go to `onError`.
 */
export async function* detachedOnClientGone<T>(
  stream: AsyncGenerator<T, void, undefined>,
  signal: AbortSignal | undefined,
  onError: (error: unknown) => void,
): AsyncGenerator<T, void, undefined> {
  if (!signal) return yield* stream;
  let removeListener = () => {};
  const gone = new Promise<'gone'>((resolve) => {
    if (signal.aborted) return resolve('gone');
    const listener = () => resolve('gone');
    signal.addEventListener('abort', listener, { once: true });
    removeListener = () => signal.removeEventListener('abort', listener);
  });
  let pending: Promise<IteratorResult<T, void>> | undefined;
  let ended = false;
  try {
    for (;;) {
      pending = stream.next();
      const result = await Promise.race([pending, gone]);
      if (result === 'gone') return;
      pending = undefined;
      if (result.done) {
        ended = true;
        return;
      }
      yield result.value;
    }
  } catch (error) {
    ended = true; // the stream threw: it is over, and its error reaches the client
    throw error;
  } finally {
    removeListener();
    // Gone, or stopped being read for any reason before the end: read the rest nobody will see.
    if (!ended) drain(stream, pending).catch(onError);
  }
}

async function drain<T>(
  stream: AsyncGenerator<T, void, undefined>,
  pending: Promise<IteratorResult<T, void>> | undefined,
): Promise<void> {
  if (pending && (await pending).done) return;
  while (!(await stream.next()).done);
}
