/**
 * Where the AI SDK's share of the first token goes (bench/streaming.ts measures `streamText` as a
 * whole): the same paced fixture model (50 tokens, 5 ms apart) read four ways in this process,
 * in turn, each from the request to the first text: a raw `node:http` request (keep-alive), the
 * same with `fetch`, the provider's `doStream` (@ai-sdk/openai-compatible, as models/ builds it)
 * read as a stream of parts, and `streamText` over it. The differences are what each layer adds.
 *
 *   node --import tsx bench/ai-sdk-first-token.ts [--rounds 60]
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { streamText } from 'ai';
import { startServer } from './lib/processes.js';
import { header, latencyLine, summarize } from './lib/report.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '60' } } });
const ROUNDS = Number(flags.rounds);
const WARM_UP = 5;

const model = await startServer(
  { kind: 'model', reply: Array.from({ length: 50 }, (_, i) => `t${i}`).join(' '), chunkDelayMs: 5 },
  { name: 'model' },
);
const body = JSON.stringify({ model: 'small', stream: true, messages: [{ role: 'user', content: 'Say something.' }] });
const agent = new http.Agent({ keepAlive: true });
const provider = createOpenAICompatible({ name: 'fixture', baseURL: model.url });
const prompt: LanguageModelV3CallOptions['prompt'] = [
  { role: 'user', content: [{ type: 'text', text: 'Say something.' }] },
];

/** Milliseconds from the request to the first chunk holding text, the rest of the reply read to its end. */
const ways: Record<string, () => Promise<number>> = {
  'raw node:http': () =>
    new Promise((resolve, reject) => {
      const start = performance.now();
      let first = 0;
      const request = http.request(
        `${model.url}/chat/completions`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (response) => {
          response.on('data', (chunk: Buffer) => {
            if (!first && chunk.toString().includes('"content"')) first = performance.now() - start;
          });
          response.on('end', () => (first ? resolve(first) : reject(new Error('no text came'))));
        },
      );
      request.on('error', reject);
      request.end(body);
    }),
  fetch: async () => {
    const start = performance.now();
    const response = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const decoder = new TextDecoder();
    let first = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      if (!first && decoder.decode(chunk).includes('"content"')) first = performance.now() - start;
    return first;
  },
  'provider doStream': async () => {
    const start = performance.now();
    const { stream } = await provider('small').doStream({ prompt });
    let first = 0;
    for await (const part of stream as unknown as AsyncIterable<{ type: string }>)
      if (!first && part.type === 'text-delta') first = performance.now() - start;
    return first;
  },
  streamText: async () => {
    const start = performance.now();
    let first = 0;
    const result = streamText({ model: provider('small'), messages: [{ role: 'user', content: 'Say something.' }] });
    for await (const delta of result.textStream) if (delta && !first) first = performance.now() - start;
    return first;
  },
};

const samples = new Map(Object.keys(ways).map((name) => [name, [] as number[]]));
try {
  for (let round = 0; round < WARM_UP + ROUNDS; round++)
    for (const [name, way] of Object.entries(ways)) {
      const ms = await way();
      if (round >= WARM_UP) samples.get(name)!.push(ms);
    }
  header("The AI SDK's first token, layer by layer", [
    `command: node --import tsx bench/ai-sdk-first-token.ts --rounds ${ROUNDS}`,
    `${ROUNDS} rounds after ${WARM_UP} warm-up, the four ways in turn; the fixture model in a child process`,
  ]);
  const raw = summarize(samples.get('raw node:http')!).median;
  let below = raw;
  for (const [name, list] of samples) {
    const s = summarize(list);
    console.log(
      latencyLine(
        `first text, ${name}`,
        s,
        `over raw ${(s.median - raw).toFixed(2)} ms, over the way above ${(s.median - below).toFixed(2)} ms`,
        30,
      ),
    );
    below = s.median;
  }
} finally {
  await model.close();
}
