/**
 * A rolling restart behind a load balancer (docs/operations.md, "Rolling restarts"): three
 * instances on one PostgreSQL database behind a proxy written here, which sends each request
 * round-robin to an instance whose /readyz answers 200, skipping one that refuses the
 * connection and retrying a 503 on the next (as nginx's `proxy_next_upstream` does). While
 * clients send a steady stream of turns through it, each instance in turn gets SIGTERM, drains,
 * exits and is started again. No turn is lost or cut short, and every client gets its answer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type AgentCard, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES } from '../support/postgres.js';
import { poll, within } from '../support/wait.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { collect, createClient, send, textOf } from './support.js';

const REPLY = 'one two three four five six seven eight nine ten';
const CLIENTS = 4;

/** A round-robin proxy over `backends` (changed as instances restart), as a load balancer with health checks. */
class Balancer {
  readonly backends: string[] = [];
  private next = 0;
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    for (let tried = 0; tried < this.backends.length * 3; tried++) {
      const backend = this.backends[this.next++ % this.backends.length]!;
      if (!(await this.ready(backend))) continue;
      const answer = await this.send(backend, req, body).catch(() => undefined);
      if (!answer) continue; // refused or cut: the next one
      if (answer.statusCode === 503) {
        answer.resume();
        continue;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      return;
    }
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"no instance ready"}');
  }

  private async ready(backend: string): Promise<boolean> {
    try {
      return (await fetch(`${backend}/readyz`)).status === 200;
    } catch {
      return false;
    }
  }

  private send(backend: string, req: IncomingMessage, body: Buffer): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const url = new URL(req.url ?? '/', backend);
      const out = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, resolve);
      out.on('error', reject);
      out.end(body);
    });
  }
}

describe('a rolling restart of three instances behind a balancer', needs(POSTGRES), () => {
  const balancer = new Balancer();
  let cluster: Cluster;

  before(async () => {
    await balancer.start();
    cluster = await startCluster({
      start: 'one by one',
      reply: REPLY,
      holdAfterChunks: 2,
      chunkDelayMs: 20,
      // The card names the balancer, so clients reach the instances only through it.
      config: { publicUrl: balancer.url, drainTimeoutMs: 120_000 },
    });
    balancer.backends.push(...cluster.instances.map((instance) => instance.url));
  });

  after(async () => {
    await cluster?.close();
    await balancer.close();
  });

  it('no turn is lost or cut short, and every client gets its answer, while each instance in turn drains and restarts', async (t) => {
    let restarting = true;
    const answered: Task[] = [];
    const failures: unknown[] = [];
    let retried = 0;
    const client = async (n: number) => {
      const a2a = await createClient(balancer.url, 'JSONRPC');
      for (let i = 0; restarting; i++) {
        // The balancer retries a refusal (503) on the next instance; one that still reaches the
        // client (UNAVAILABLE, with Retry-After in its metadata) is sent again, as a client should.
        for (;;) {
          const outcome = await send(a2a, `client ${n} turn ${i}`).then(
            (task) => ({ task }),
            (error: unknown) => ({ error }),
          );
          if ('task' in outcome) answered.push(outcome.task);
          else if (isUnavailable(outcome.error)) {
            retried += 1;
            continue;
          } else failures.push(outcome.error);
          break;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));

    for (let i = 0; i < cluster.instances.length; i++) {
      const instance = cluster.instances[i]!;
      // A turn surely running on this instance when it is told to stop: sent to it, not through
      // the balancer (the card names the balancer).
      const held = await cluster.heldTurn(await pinnedClient(instance.url, balancer.url));
      const exited = instance.stop('SIGTERM');
      // A probe cut off as the instance closes idle connections counts as not answered yet.
      await poll(
        'its /readyz failing',
        async () => (await fetch(`${instance.url}/readyz`).catch(() => undefined))?.status === 503,
      );
      held.release();
      const events = await collect(held.stream);
      const end = events.at(-1)?.payload;
      assert.equal(end?.$case, 'statusUpdate');
      assert.equal(end.value.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(textOf(end.value.status?.message), REPLY, 'the turn running at the stop finished');
      assert.equal(await within('the instance exiting', exited), 0, instance.stderr());
      const again: ServerProcess = await cluster.startInstance(`instance-${i}-again`);
      balancer.backends[i] = again.url;
    }
    const before = answered.length;
    await poll('turns answered after the last restart', () => answered.length > before + CLIENTS);
    restarting = false;
    await within('the clients finishing', Promise.all(clients));

    assert.deepEqual(failures, [], 'every client got an answer');
    t.diagnostic(
      `${answered.length} turns answered; ${retried} refused as the instance drained, sent again and answered`,
    );
    assert.ok(answered.length > CLIENTS * 3, `turns went on throughout: ${answered.length}`);
    for (const task of answered) {
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, task.id);
      assert.equal(textOf(task.status?.message), REPLY, `task ${task.id}: its whole reply, not interrupted`);
    }
    const reader = await createClient(balancer.url, 'JSONRPC');
    for (const task of answered) {
      const stored = await reader.getTask({ tenant: '', id: task.id, historyLength: undefined });
      assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, `task ${task.id} stored as answered`);
      assert.equal(textOf(stored.history.at(-1)), REPLY);
    }
  });
});

/** A refusal to retry: the A2A error UNAVAILABLE (a draining instance, or one at its limit of turns). */
function isUnavailable(error: unknown): boolean {
  const data = (error as { data?: { reason?: string }[] } | undefined)?.data;
  return Array.isArray(data) && data.some((detail) => detail?.reason === 'UNAVAILABLE');
}

/** A client of the one instance at `instanceUrl`, whose card names `publicUrl` (the balancer). */
async function pinnedClient(instanceUrl: string, publicUrl: string): Promise<Client> {
  const card = (await (await fetch(`${instanceUrl}/.well-known/agent-card.json`)).json()) as AgentCard;
  const pinned = JSON.parse(JSON.stringify(card).replaceAll(publicUrl, instanceUrl)) as AgentCard;
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory()],
    preferredTransports: ['JSONRPC'],
  }).createFromAgentCard(pinned);
}
