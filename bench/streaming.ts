/**
 * Streaming through the harness vs reading the model directly: time to first token and tokens
 * per second of `SendStreamingMessage` (an ordinary message, so a model turn on a new task)
 * against the same fixture OpenAI-compatible model server read directly with a
 * `chat/completions` SSE request.
 *
 *   node --import tsx bench/streaming.ts [--pairs 100] [--paced-pairs 30] [--only paced|unpaced]
 *
 * Two fixture models, each in its own child process: "unpaced" streams 200 one-word tokens
 * with no delay (the harness's ceiling), "paced" streams 50 tokens 5 ms apart (~190 tokens/s,
 * faster than hosted models). The harness runs in a child process, with the fixture as its
 * default model; the client here is a raw `node:http` SSE client (keep-alive) for both sides,
 * so the SDK client's parsing is in neither figure. Requests alternate direct / harness, one at
 * a time, after 5 warm-up pairs. Each reply is checked: the streamed text equals the fixture's.
 * Time to first token: from writing the request to the first event carrying text (a content
 * delta; an artifact update). Tokens per second: the tokens after the first event over the
 * time from the first to the last event with text (each fixture token is one word `tN`, so an
 * event carrying several counts them all). A third side, the bare SDK relaying the same model
 * with `fetch` (bench/bare-sdk-agent.ts), shows what any A2A server on the SDK adds.
 * Goals (issue 14): the time the harness adds to the first token at the median is at most what
 * the bare SDK relay adds in the same run; no loss of throughput.
 */
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, parseStreamEvent, partsText, postSse, streamingRequest } from './lib/clients.js';
import { cpuMs, startServer, ADMIT_ALL } from './lib/processes.js';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';
import { header, latencyLine, ms, num, printVerdicts, summarize, times, verdict, type Summary } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    pairs: { type: 'string', default: '100' },
    'paced-pairs': { type: 'string', default: '30' },
    only: { type: 'string' },
  },
});
const WARM_UP = 5;
/** Run-to-run noise: a throughput within 5% of the direct one counts as no loss. */
const TOLERANCE = 0.95;

interface Sample {
  ttft: number;
  /** Tokens per second from the first token to the last (Infinity when all came with the first). */
  tokensPerSecond: number;
  /** From writing the request to the last token. */
  lastToken: number;
  /** Events that carried text. */
  events: number;
}

/** Each fixture token is one word `tN`; an event may carry several (the harness may merge). */
const tokenCount = (text: string) => text.match(/t\d+/g)?.length ?? 0;

function sample(start: number, arrivals: Array<{ at: number; tokens: number }>): Sample {
  const first = arrivals[0]!;
  const last = arrivals[arrivals.length - 1]!;
  const after = arrivals.reduce((sum, a) => sum + a.tokens, 0) - first.tokens;
  return {
    ttft: first.at - start,
    tokensPerSecond: after > 0 && last.at > first.at ? (after * 1000) / (last.at - first.at) : Infinity,
    lastToken: last.at - start,
    events: arrivals.length,
  };
}

async function direct(baseURL: string, expected: string): Promise<Sample> {
  const body = {
    model: 'small',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Say something.' }],
  };
  const arrivals: Array<{ at: number; tokens: number }> = [];
  let text = '';
  const result = await postSse(`${baseURL}/chat/completions`, body, {
    keep: false,
    onEvent: (event) => {
      if (event.data === '[DONE]') return;
      const delta = (JSON.parse(event.data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]
        ?.delta?.content;
      if (!delta) return;
      text += delta;
      arrivals.push({ at: event.at, tokens: tokenCount(delta) });
    },
  });
  if (text !== expected) throw new Error(`direct stream text differs: ${JSON.stringify(text.slice(0, 80))}`);
  return sample(result.start, arrivals);
}

/**
 * The AI SDK alone, in this process: `streamText` against the same fixture, as the harness's
 * model loop calls it (models/ uses the same provider package). What it adds to the first token
 * over a raw request is the AI SDK's own, which the harness cannot go under.
 */
async function viaAiSdk(baseURL: string, expected: string): Promise<Sample> {
  const provider = createOpenAICompatible({ name: 'fixture', baseURL });
  const arrivals: Array<{ at: number; tokens: number }> = [];
  let text = '';
  const start = performance.now();
  const result = streamText({ model: provider('small'), messages: [{ role: 'user', content: 'Say something.' }] });
  for await (const delta of result.textStream) {
    if (!delta) continue;
    text += delta;
    arrivals.push({ at: performance.now(), tokens: tokenCount(delta) });
  }
  if (text !== expected) throw new Error(`AI SDK stream text differs: ${JSON.stringify(text.slice(0, 80))}`);
  return sample(start, arrivals);
}

/** An A2A agent (the harness or the bare SDK relay): the artifact text as it streams. */
async function viaAgent(url: string, expected: string): Promise<Sample> {
  const arrivals: Array<{ at: number; tokens: number }> = [];
  let text = '';
  let final = '';
  const result = await postSse(`${url}/a2a/jsonrpc`, streamingRequest('Say something.'), {
    headers: A2A_HEADERS,
    keep: false,
    onEvent: (event) => {
      const r = parseStreamEvent(event.data);
      const piece = partsText(r.artifactUpdate?.artifact.parts);
      if (piece) {
        text += piece;
        arrivals.push({ at: event.at, tokens: tokenCount(piece) });
      }
      if (r.statusUpdate?.status?.state === 'TASK_STATE_INPUT_REQUIRED')
        final = partsText(r.statusUpdate.status.message?.parts);
    },
  });
  if (text !== expected || final !== expected)
    throw new Error(
      `agent stream text differs: ${JSON.stringify(text.slice(0, 80))} / final ${JSON.stringify(final.slice(0, 80))}`,
    );
  return sample(result.start, arrivals);
}

const rateOf = (samples: Sample[]) => summarize(samples.map((s) => s.tokensPerSecond));
const rate = (value: number) => (value === Infinity ? 'all with the first token' : num(value));

function rateLine(label: string, samples: Sample[], base?: Sample[]): string {
  const r = rateOf(samples);
  const low = -summarize(samples.map((s) => -s.tokensPerSecond)).p90;
  const ratio = base && r.median !== Infinity ? `   vs direct ${times(r.median, rateOf(base).median)}` : '';
  return `  ${label.padEnd(34)} median ${rate(r.median)}   p10 ${rate(low)}   events with text per reply: median ${summarize(samples.map((s) => s.events)).median}${ratio}`;
}

/** Issue 23: what the harness adds to a paced model's first token, at most this many times the bare relay's. */
const PACED_FIRST_TOKEN_RATIO = 1.5;

async function scenario(name: string, tokens: number, chunkDelayMs: number, pairs: number): Promise<void> {
  const reply = numberedReply(tokens);
  const model = await startServer({ kind: 'model', reply, chunkDelayMs }, { name: `model-${name}` });
  const dataDir = tempDir(`streaming-${name}`);
  const harness = await startServer(
    {
      kind: 'harness',
      dataDir,
      config: {
        defaultModel: 'fixture:small',
        detectOllama: false,
        admission: ADMIT_ALL,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
      },
    },
    { name: `harness-streaming-${name}` },
  );
  const bare = await startServer(
    { kind: 'bare', options: { model: { baseURL: model.url, model: 'small' } } },
    { name: `bare-streaming-${name}` },
  );
  try {
    for (let i = 0; i < WARM_UP; i++) {
      await direct(model.url, reply);
      await viaAgent(bare.url, reply);
      await viaAgent(harness.url, reply);
    }
    const d: Sample[] = [];
    const a: Sample[] = [];
    const b: Sample[] = [];
    const h: Sample[] = [];
    let harnessCpu = 0;
    let bareCpu = 0;
    for (let i = 0; i < pairs; i++) {
      d.push(await direct(model.url, reply));
      a.push(await viaAiSdk(model.url, reply));
      const bareBefore = await bare.cpu();
      b.push(await viaAgent(bare.url, reply));
      bareCpu += cpuMs(bareBefore, await bare.cpu());
      const before = await harness.cpu();
      h.push(await viaAgent(harness.url, reply));
      harnessCpu += cpuMs(before, await harness.cpu());
      await model.reset(); // the fixture records every request; keep its memory flat
    }
    const [dt, at, bt, ht] = [d, a, b, h].map((list) => summarize(list.map((s) => s.ttft))) as [
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    const [dl, bl, hl] = [d, b, h].map((list) => summarize(list.map((s) => s.lastToken))) as [
      Summary,
      Summary,
      Summary,
    ];
    console.log(
      `${name}: ${tokens} tokens, ${chunkDelayMs ? `${chunkDelayMs} ms apart` : 'no delay (written in one burst)'}; ${pairs} rounds (direct, bare SDK relay, harness) after ${WARM_UP} warm-up rounds`,
    );
    console.log(latencyLine('first token, direct', dt));
    console.log(latencyLine('first token, AI SDK streamText', at));
    console.log(latencyLine('first token, bare SDK relay', bt));
    console.log(latencyLine('first token, harness', ht));
    console.log(
      `  added to the first token: harness ${ms(ht.median - dt.median)} at the median (p99 ${ms(ht.p99 - dt.p99)}); bare SDK relay ${ms(bt.median - dt.median)} (p99 ${ms(bt.p99 - dt.p99)}); the AI SDK's streamText alone ${ms(at.median - dt.median)}`,
    );
    console.log(rateLine('tokens/s after the first, direct', d));
    console.log(rateLine('tokens/s after the first, bare', b, d));
    console.log(rateLine('tokens/s after the first, harness', h, d));
    console.log(latencyLine('last token, direct', dl));
    console.log(latencyLine('last token, bare SDK relay', bl));
    console.log(latencyLine('last token, harness', hl));
    console.log(
      `  whole reply: harness/direct ${times(hl.median, dl.median)}, bare/direct ${times(bl.median, dl.median)} at the median`,
    );
    console.log(
      `  server CPU per turn: harness ${(harnessCpu / pairs).toFixed(1)} ms (${((harnessCpu / pairs / tokens) * 1000).toFixed(0)} us per token), ` +
        `bare SDK relay ${(bareCpu / pairs).toFixed(1)} ms (${((bareCpu / pairs / tokens) * 1000).toFixed(0)} us per token)`,
    );
    // Issue 14 asked for no more than the bare relay adds; issue 23 allows a paced model's x1.5.
    const allowed = chunkDelayMs > 0 ? PACED_FIRST_TOKEN_RATIO : 1;
    verdict(
      ht.median - dt.median <= (bt.median - dt.median) * allowed,
      `${name}: ${(ht.median - dt.median).toFixed(2)} ms added to the first token at the median, the bare SDK relay ${(bt.median - dt.median).toFixed(2)} ms ` +
        (allowed === 1
          ? '(goal, issue 14: no more than the bare relay adds in the same run)'
          : `(goal, issue 23: at most x${allowed} what the bare relay adds in the same run)`),
    );
    if (chunkDelayMs > 0) {
      // The goal as issue 23 states it compares the harness, whose model loop is the AI SDK's
      // streamText, with a relay that reads the model with fetch: the AI SDK's own share is in
      // the one and not the other. This is the same goal without that share.
      const own = ht.median - at.median;
      verdict(
        own <= (bt.median - dt.median) * PACED_FIRST_TOKEN_RATIO,
        `${name}: the harness adds ${own.toFixed(2)} ms to the first token beyond the AI SDK's streamText (${(at.median - dt.median).toFixed(2)} ms over a raw request), the bare SDK relay ${(bt.median - dt.median).toFixed(2)} ms (goal proposed for issue 23: at most x${PACED_FIRST_TOKEN_RATIO} what the bare relay adds, the AI SDK's share left out)`,
      );
    }
    const [dr, hr] = [rateOf(d).median, rateOf(h).median];
    verdict(
      hr >= dr * TOLERANCE,
      hr === Infinity
        ? `${name}: every token came with the first event in most replies (the burst merged into one update), so nothing waited after the first token (goal: no loss of throughput)\n`
        : `${name}: ${rate(hr).trim()} vs ${rate(dr).trim()} tokens/s after the first token (medians), ${times(hr, dr)} (goal: no loss of throughput; >= x${TOLERANCE} for noise)\n`,
    );
  } finally {
    await Promise.all([harness.close(), bare.close(), model.close()]);
  }
}

async function main(): Promise<void> {
  const pairs = Number(flags.pairs);
  const pacedPairs = Number(flags['paced-pairs']);
  header('Streaming: time to first token and tokens/s, harness vs the model read directly', [
    `command: node --import tsx bench/streaming.ts --pairs ${pairs} --paced-pairs ${pacedPairs}`,
    'SendStreamingMessage over JSON-RPC (a new task, an ordinary message: one model turn) vs POST /v1/chat/completions (stream: true) to the same fixture; ' +
      'raw node:http SSE client with keep-alive for both; harness and fixtures in child processes; SqlTaskStore on SQLite.',
  ]);
  if (flags.only !== 'paced') await scenario('unpaced', 200, 0, pairs);
  if (flags.only !== 'unpaced') await scenario('paced', 50, 5, pacedPairs);
  printVerdicts('streaming');
}

await main();
