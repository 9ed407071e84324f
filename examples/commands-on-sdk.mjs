// An existing @a2a-js/sdk agent gains the Commands extension: /help and /time, answered without
// the agent. Run: node examples/commands-on-sdk.mjs [port], then `npx tiny-harness conform <url>`.
import express from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { CommandRegistry, helpCommand, mountCommandsOnSdk } from '@tiny-harness/commands-extension';

export async function startAgent(executor, port = 0) {
  const registry = new CommandRegistry();
  registry.register(helpCommand(registry));
  registry.register({ name: 'time', description: 'The time on the server', handler: () => ({ text: Date() }) });
  const app = express();
  const server = await new Promise((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  const binding = (path, protocolBinding) => ({ url: url + path, protocolBinding, tenant: '', protocolVersion: '1.0' });
  // prettier-ignore
  const card = { name: 'echo', description: 'An agent with commands', version: '1.0.0', skills: [], signatures: [],
    supportedInterfaces: [binding('/a2a/jsonrpc', 'JSONRPC'), binding('/a2a/rest', 'HTTP+JSON')],
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'] };
  const handler = mountCommandsOnSdk({ card, executor, registry });
  const userBuilder = UserBuilder.noAuthentication;
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder }));
  return { url, handler, close: () => new Promise((resolve) => server.close(resolve)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const executor = { execute: async () => {}, cancelTask: async () => {} }; // your agent here
  console.log((await startAgent(executor, Number(process.argv[2] ?? 8080))).url);
}
