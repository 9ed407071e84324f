import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamResponse } from '@a2a-js/sdk';
import { nextMatching } from '../support/wait.js';
import { APPROVE_ECHO, pause, reply, toolCalls, turnEnded } from './approval-support.js';
import { collect, send, startTestHarness, textOf, type TestHarness, sendStream } from './support.js';

/**
 * A turn resumed after `/approve` goes on with work admitted before: at the bound on turns in
 * flight it is counted but not refused, since its answers are stored already and a refusal
 * would lose them (`TurnLimit.takePastLimit`). A new turn is still refused meanwhile.
 */
let h: TestHarness;
let letGo!: () => void;
const held = new Promise<void>((resolve) => (letGo = resolve));

before(async () => {
  h = await startTestHarness({
    config: { ...APPROVE_ECHO, maxTurnsInFlight: 1 },
    script: {
      toolCalls,
      reply,
      hold: (body) =>
        JSON.stringify(body.messages ?? []).includes('hold me') ? { afterChunks: 1, until: held } : undefined,
    },
  });
});

after(async () => {
  letGo();
  await h?.close();
});

describe('maxTurnsInFlight: 1, and a turn waiting for approval', () => {
  it('CMD-33: /approve resumes the turn though the one place is taken; a new turn is refused meanwhile', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'please echo hello');
    // The one place, taken by a turn the fixture holds.
    const holding = sendStream(client, 'hold me');
    await nextMatching(
      'the held turn streaming',
      holding,
      (event: StreamResponse) => event.payload?.$case === 'artifactUpdate',
    );
    await assert.rejects(send(client, 'a new turn'), /at its limit of 1 running turn\./);

    const answer = await send(client, '/approve', { taskId: paused.taskId });
    const resumed = await turnEnded(client, paused.taskId, answer);
    assert.match(textOf(resumed.status?.message), /^tool said: .*hello/);

    letGo();
    await collect(holding);
  });
});
