/**
 * Issue 38, the extended card: `capabilities.extendedAgentCard`, `GetExtendedAgentCard` on the
 * three transports to signed-in callers only, and the commands configuration offers to them
 * alone (`commands.visibility`), listed there and nowhere else, and no command to anyone else.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AgentCard } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI, COMMAND_ARGUMENTS_EXTENSION_URI } from '../../src/wire.js';
import { createClient, send, startTestHarness, TRANSPORTS, type TestHarness } from './support.js';

const ALICE = 'alice-token-0123456789abcdef';
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const HIDDEN = 'status';
const config = { commands: { visibility: { [HIDDEN]: 'authenticated' as const } } };
const unauthenticated = (error: any) =>
  /401|UNAUTHENTICATED|\b16\b|authentication required|signed-in/i.test(
    `${error?.message} ${error?.code} ${error?.name} ${error?.cause?.code}`,
  );

/** The names the card's commands entry lists, and those the command-arguments entry offers `/help`. */
function commandNames(card: AgentCard): { commands: string[]; helpValues: string[] } {
  const extensions = card.capabilities?.extensions ?? [];
  const commands = extensions.find((e) => e.uri === COMMANDS_EXTENSION_URI)?.params as any;
  const args = extensions.find((e) => e.uri === COMMAND_ARGUMENTS_EXTENSION_URI)?.params as any;
  const help = (args?.arguments ?? []).find((a: any) => a.command === 'help');
  return {
    commands: commands.commands.map((c: any) => c.name),
    helpValues: (help?.values ?? []).map((v: any) => v.value),
  };
}

/** `card` (A2A JSON) without the hidden command: its commands entry and `/help`'s values left out; no signatures. */
function withoutHidden(card: unknown): unknown {
  const copy = structuredClone(card) as any;
  delete copy.signatures;
  for (const extension of copy.capabilities.extensions) {
    if (extension.uri === COMMANDS_EXTENSION_URI)
      extension.params.commands = extension.params.commands.filter((c: any) => c.name !== HIDDEN);
    if (extension.uri === COMMAND_ARGUMENTS_EXTENSION_URI)
      for (const entry of extension.params.arguments)
        entry.values = entry.values.filter((v: any) => v.value !== HIDDEN);
  }
  return copy;
}

async function publicCard(h: TestHarness): Promise<AgentCard> {
  const response = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
  assert.equal(response.status, 200);
  return (await response.json()) as AgentCard;
}

describe('issue 38: the extended card, with tokens', () => {
  let h: TestHarness;
  before(async () => {
    h = await startTestHarness({ config, harness: { auth: { tokens: new Map([[ALICE, 'alice']]) } } });
  });
  after(() => h?.close());

  it('issue 38: the public card says extendedAgentCard and leaves the authenticated command out', async () => {
    const card = await publicCard(h);
    assert.equal(card.capabilities?.extendedAgentCard, true);
    const names = commandNames(card);
    assert.ok(names.commands.includes('help') && !names.commands.includes(HIDDEN), names.commands.join(' '));
    assert.ok(!names.helpValues.includes(HIDDEN));
  });

  for (const transport of TRANSPORTS) {
    it(`issue 38: GetExtendedAgentCard over ${transport} lists it too, and differs from the public card in it alone`, async () => {
      const client = await h.client(transport, as(ALICE));
      const extended = await client.getAgentCard();
      const names = commandNames(extended);
      assert.ok(names.commands.includes(HIDDEN), names.commands.join(' '));
      assert.ok(names.helpValues.includes(HIDDEN));
      const publicJson = AgentCard.toJSON(AgentCard.fromJSON(await publicCard(h)));
      assert.deepEqual(withoutHidden(AgentCard.toJSON(extended)), withoutHidden(publicJson));
    });

    it(`issue 38: an anonymous GetExtendedAgentCard over ${transport} is refused as unauthenticated`, async () => {
      const client = await createClient(h.harness.url, transport);
      await assert.rejects(client.getAgentCard(), unauthenticated);
    });
  }

  it('issue 38: a signed-in caller runs the authenticated command', async () => {
    const client = await h.client('JSONRPC', as(ALICE));
    const task = await send(client, `/${HIDDEN}`);
    assert.equal(task.status?.message?.metadata?.command, HIDDEN);
  });
});

describe('issue 38: the extended card, without tokens (every caller anonymous)', () => {
  let h: TestHarness;
  before(async () => {
    h = await startTestHarness({ config });
  });
  after(() => h?.close());

  it('issue 38: the card offers no extended card, and GetExtendedAgentCard answers ExtendedAgentCardNotConfiguredError on each transport', async () => {
    assert.equal((await publicCard(h)).capabilities?.extendedAgentCard, false);
    const jsonRpc = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} }),
    });
    assert.equal((await jsonRpc.json()).error.code, -32007);
    const rest = await fetch(`${h.harness.url}/a2a/rest/extendedAgentCard`, { headers: { 'a2a-version': '1.0' } });
    assert.equal(rest.status, 400);
    assert.equal((await rest.json()).error.status, 'FAILED_PRECONDITION');
    const { GrpcTransportFactory } = await import('@a2a-js/sdk/client/grpc');
    const card = AgentCard.fromJSON(await publicCard(h));
    const grpc = await new GrpcTransportFactory().create(
      card.supportedInterfaces.find((entry) => entry.protocolBinding === 'GRPC')!.url,
      card,
    );
    await assert.rejects(
      grpc.getExtendedAgentCard({ tenant: '' }, { serviceParameters: { 'a2a-version': '1.0' } }),
      (error: any) =>
        /FAILED_PRECONDITION|\b9\b|not configured|no extended card/i.test(
          `${error?.code} ${error?.message} ${error?.name} ${error?.cause?.code}`,
        ),
    );
  });

  for (const transport of TRANSPORTS) {
    it(`issue 38: over ${transport}, the hidden command is refused to an anonymous caller exactly as an unknown one: both reach the model`, async () => {
      const client = await h.client(transport);
      const hidden = await send(client, `/${HIDDEN} ${transport}`);
      const unknown = await send(client, `/no-such-command ${transport}`);
      for (const task of [hidden, unknown]) assert.equal(task.status?.message?.metadata?.command, undefined);
      const sent = h.chatRequests().map((body) => JSON.stringify(body.messages.at(-1)));
      for (const text of [`/${HIDDEN} ${transport}`, `/no-such-command ${transport}`])
        assert.ok(
          sent.some((line) => line.includes(text)),
          `the model was not sent ${text}`,
        );
      assert.equal(hidden.status?.state, unknown.status?.state);
      assert.equal(hidden.history.length, unknown.history.length);
      const help = await send(client, `/help ${HIDDEN}`);
      assert.match(String((help.status?.message?.parts[0]?.content as any)?.value), /There is no command/);
    });
  }
});
