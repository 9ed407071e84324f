/**
 * Issue 38: GetExtendedAgentCard behind the edge. An anonymous caller that reaches it (no edge
 * refused it) is refused as the edge refuses a missing token, on every binding; a signed-in
 * caller gets the card.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServerCallContext, UnauthenticatedUser } from '@a2a-js/sdk/server';
import { HarnessRequestHandler } from '../../src/runtime/request-handler.js';
import { errorMappingStep, transportForms } from '../../src/server/a2a-errors.js';
import { baseAgentCard } from '../../src/server/card.js';
import { callContext } from '../store/helpers.js';

const card = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: '0', bearerAuth: true });
const handler = new HarnessRequestHandler({} as never, {} as never, {} as never, () => card);

describe('issue 38: GetExtendedAgentCard in the request handler', () => {
  it('issue 38: a signed-in caller gets the card', async () => {
    assert.equal(await handler.getAuthenticatedExtendedAgentCard({ tenant: '' }, callContext('alice')), card);
  });

  it('issue 38: an anonymous caller is refused, past errorMapping, in the forms of the edge refusal: 401, UNAUTHENTICATED', async () => {
    const anonymous = new ServerCallContext({ user: new UnauthenticatedUser() });
    const step = errorMappingStep(() => assert.fail('not an internal error'));
    const call = {
      method: 'getAuthenticatedExtendedAgentCard',
      params: { tenant: '' },
      context: anonymous,
      streaming: false,
    };
    const error = await (
      step.around(call as never, () =>
        handler.getAuthenticatedExtendedAgentCard({ tenant: '' }, anonymous),
      ) as Promise<unknown>
    ).catch((caught: unknown) => caught);
    const forms = transportForms(error);
    assert.equal(forms.jsonRpc.httpStatus, 401);
    assert.equal(forms.http.status, 401);
    assert.equal(forms.http.body.error.status, 'UNAUTHENTICATED');
    assert.match(forms.jsonRpc.error.message, /signed-in callers/);
  });
});
