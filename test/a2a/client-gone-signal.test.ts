import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { ServerResponse } from 'node:http';
import { clientGoneSignal, setClientGoneSignal } from '../../src/a2a/index.js';
import { responseClosed } from '../../src/server/call-context.js';
import { cancelledSignal } from '../../src/server/grpc-binding.js';

/** A call's "client gone" signal is made only when something asks for it (`clientGoneSignal`, packages/commands-extension/src/client-gone.ts). */

/** A response as `responseClosed` sees it: an emitter with `closed`. */
function response(): EventEmitter & { closed: boolean } {
  return Object.assign(new EventEmitter(), { closed: false });
}

describe('the client-gone signal', () => {
  it('is made when first asked, once, and is the same signal after', () => {
    const context = new ServerCallContext();
    let made = 0;
    const controller = new AbortController();
    setClientGoneSignal(context, () => (made++, controller.signal));
    assert.equal(made, 0, 'a call that never asks makes none');
    assert.equal(clientGoneSignal(context), controller.signal);
    assert.equal(clientGoneSignal(context), controller.signal);
    assert.equal(made, 1);
    assert.equal(clientGoneSignal(new ServerCallContext()), undefined, 'a call without one has none');
  });

  it('over HTTP, fires when the response closes, or has fired already when asked after it closed', () => {
    const res = response();
    const open = responseClosed(res as unknown as ServerResponse);
    assert.equal(open.aborted, false);
    res.closed = true;
    res.emit('close');
    assert.equal(open.aborted, true);
    assert.equal(responseClosed(res as unknown as ServerResponse).aborted, true, 'asked once the response had closed');
    assert.equal(res.listenerCount('close'), 0);
  });

  it('over gRPC, fires when the call is cancelled, or has fired already when asked after', () => {
    const call = Object.assign(new EventEmitter(), { cancelled: false });
    const signal = cancelledSignal(call);
    call.cancelled = true;
    call.emit('cancelled');
    assert.equal(signal.aborted, true);
    assert.equal(cancelledSignal(call).aborted, true);
  });
});
