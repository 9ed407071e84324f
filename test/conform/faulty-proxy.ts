import { COMMANDS_EXTENSION_URI } from '../../src/wire.js';
/**
 * Deliberately wrong servers for the conformance kit: the harness behind a JSON-RPC proxy that
 * injects exactly one defect. Starting from a server that passes every check and changing one
 * thing is what lets a test say the kit fails on exactly the rule that thing breaks; a server
 * written from scratch for each defect would differ from a conforming one in many ways.
 *
 * The proxy serves the card (naming itself, JSON-RPC only) and forwards JSON-RPC, rewriting
 * requests, answers, stream events and headers as the defect says.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

type Json = Record<string, any>;

/** One defect: hooks over what passes through; each may change its argument in place. */
export interface Defect {
  card?(card: Json): void;
  /** A JSON-RPC request's params, by method. */
  request?(method: string, params: Json): void;
  /** A JSON-RPC result (a blocking answer or one stream event); return false to drop a stream event. */
  result?(method: string, result: Json): boolean | void;
  /** Response headers, lower-case names. */
  headers?(headers: Record<string, string>): void;
}

export interface FaultyServer {
  url: string;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFaultyServer(upstream: string, defect: Defect): Promise<FaultyServer> {
  let self = '';
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/.well-known/agent-card.json')) {
      const card = (await (await fetch(`${upstream}/.well-known/agent-card.json`)).json()) as Json;
      card.supportedInterfaces = [
        { url: `${self}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      ];
      defect.card?.(card);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
      return;
    }
    const request = JSON.parse(await body(req)) as Json;
    defect.request?.(request.method, request.params ?? {});
    const forwarded: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
        forwarded[name] = value;
    }
    const answer = await fetch(`${upstream}/a2a/jsonrpc`, {
      method: 'POST',
      headers: forwarded,
      body: JSON.stringify(request),
    });
    const headers: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(name))
        headers[name] = value;
    });
    defect.headers?.(headers);
    res.writeHead(answer.status, headers);
    if (!(answer.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const json = (await answer.json()) as Json;
      if (json.result) defect.result?.(request.method, json.result);
      res.end(JSON.stringify(json));
      return;
    }
    // Server-sent events: each `data:` line is one JSON-RPC answer holding one stream event.
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = pending.indexOf('\n\n')) >= 0) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const data = event.split('\n').find((line) => line.startsWith('data:'));
        if (!data) continue;
        const json = JSON.parse(data.slice(5)) as Json;
        if (json.result && defect.result?.(request.method, json.result) === false) continue;
        res.write(`data: ${JSON.stringify(json)}\n\n`);
      }
    }
    res.end();
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: self,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The reply messages and status updates in a result, whatever its shape (task, update, GetTask). */
function statusesIn(result: Json): Json[] {
  return [result.task?.status, result.statusUpdate?.status, result.status].filter(Boolean);
}

/** The defects, each breaking one rule (or the rules that say the same thing twice). */
export const DEFECTS: Record<string, { defect: () => Defect; breaks: string[]; allowModel?: boolean }> = {
  'reply metadata without command': {
    breaks: ['CMD-4', 'CMD-5'],
    defect: () => ({
      result(_method, result) {
        for (const status of statusesIn(result)) delete status.message?.metadata?.command;
        if (result.statusUpdate?.metadata) delete result.statusUpdate.metadata.command;
      },
    }),
  },
  'the state changed by a command': {
    breaks: ['CMD-4', 'CMD-6'],
    defect: () => {
      const known = new Set<string>();
      return {
        result(method, result) {
          const task = result.task ?? (method === 'GetTask' ? result : undefined);
          if (method === 'SendMessage' && task && !known.has(task.id)) return void known.add(task.id);
          // A command on a task that existed moves it to WORKING, and it stays there.
          if (method === 'GetTask' && known.has(result.id) && result.status.state === 'TASK_STATE_INPUT_REQUIRED')
            result.status.state = 'TASK_STATE_WORKING';
          if (result.statusUpdate && known.has(result.statusUpdate.taskId))
            result.statusUpdate.status.state = 'TASK_STATE_WORKING';
        },
      };
    },
  },
  'an unregistered /x answered as a command': {
    breaks: ['CMD-3'],
    allowModel: true,
    defect: () => ({
      request(_method, params) {
        const part = params.message?.parts?.[0];
        if (typeof part?.text === 'string' && part.text.startsWith('/zz-')) part.text = '/help';
      },
    }),
  },
  'a card entry with an extra key': {
    breaks: ['CMD-14'],
    defect: () => ({
      card(card) {
        commandsEntry(card).params.commands[0].hidden = false;
      },
    }),
  },
  'a card entry with an uppercase name': {
    breaks: ['CMD-15'],
    defect: () => ({
      card(card) {
        const spawn = commandsEntry(card).params.commands.find((c: Json) => c.name === 'spawn');
        spawn.name = 'Spawn';
      },
    }),
  },
  'no header echo': {
    breaks: ['CMD-17'],
    defect: () => ({
      headers(headers) {
        delete headers['a2a-extensions'];
      },
    }),
  },
  'a command run twice on a resend': {
    breaks: ['CMD-13'],
    defect: () => {
      const seen = new Set<string>();
      return {
        request(_method, params) {
          const id = params.message?.messageId;
          if (typeof id !== 'string') return;
          if (seen.has(id)) params.message.messageId = randomUUID();
          seen.add(id);
        },
      };
    },
  },
  'a reply missing from an open stream': {
    breaks: ['CMD-8'],
    defect: () => ({
      result(method, result) {
        if (method === 'SubscribeToTask' && result.statusUpdate?.status?.message?.metadata?.command) return false;
      },
    }),
  },
};

/** The Commands extension's entry of a card (found by its URI: other extensions may come first). */
function commandsEntry(card: Json): Json {
  return card.capabilities.extensions.find((extension: Json) => extension.uri === COMMANDS_EXTENSION_URI);
}
