/**
 * `/metrics` under many scrapers (issue 33): the median streamed turn with no scraper, then with
 * `--scrapers` scraping `/metrics` on the A2A port in parallel, each again as soon as it has read
 * the last answer (an outside run: 50 such scrapers raised the median turn from 25 to 476 ms).
 *
 *   node --import tsx bench/scrapers.ts [--scrapers 50] [--turns 60] [--before <checkout>]
 *
 * Each harness (this checkout's, and `--before`'s: a checkout of earlier code, `git archive
 * <commit> | tar -x -C dir` with node_modules linked) runs in a child process on SQLite, its
 * metrics on (the default) and on the A2A port, against the fixture model (100-token replies, no
 * delay). The scrapers run in a worker thread, so that their own work does not delay this
 * thread's turns. A measurement, not a test: it exits 0 whatever the numbers.
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, postSse, streamingRequest } from './lib/clients.js';
import { ADMIT_ALL, startServer, type ServerProcess } from './lib/processes.js';
import { header, latencyLine, printVerdicts, summarize, verdict } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    scrapers: { type: 'string', default: '50' },
    turns: { type: 'string', default: '60' },
    before: { type: 'string' },
  },
});
const SCRAPERS = Number(flags.scrapers);
const TURNS = Number(flags.turns);
const WARM_UP = 5;
/** The goal: the median turn with the scrapers at most this many times the median turn without. */
const GOAL_RATIO = 1.5;

/** Scrapers in a loop each, until told to stop; they report what they were answered. */
const SCRAPER_SOURCE = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
let stopping = false, ok = 0, refused = 0, failed = 0;
parentPort.on('message', () => (stopping = true));
const agent = new http.Agent({ keepAlive: true });
function scrape() {
  if (stopping) return Promise.resolve();
  return new Promise((resolve) => {
    const request = http.get(workerData.url, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode === 200) ok++; else if (response.statusCode === 503) refused++; else failed++;
        resolve();
      });
    });
    request.on('error', () => (failed++, resolve()));
  }).then(scrape);
}
Promise.all(Array.from({ length: workerData.scrapers }, scrape)).then(() => parentPort.postMessage({ ok, refused, failed }));
`;

function startScrapers(url: string) {
  const worker = new Worker(SCRAPER_SOURCE, { eval: true, workerData: { url, scrapers: SCRAPERS } });
  const done = new Promise<{ ok: number; refused: number; failed: number }>((resolve) =>
    worker.once('message', resolve),
  );
  return {
    async stop() {
      worker.postMessage('stop');
      const counts = await done;
      await worker.terminate();
      return counts;
    },
  };
}

/** One streamed turn on a new task: its whole time, in ms. */
async function turn(url: string): Promise<number> {
  const result = await postSse(`${url}/a2a/jsonrpc`, streamingRequest('Say something.'), {
    headers: A2A_HEADERS,
    keep: false,
  });
  if (result.status !== 200) throw new Error(`a turn answered HTTP ${result.status}`);
  return result.end - result.start;
}

async function turns(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < TURNS; i++) times.push(await turn(url));
  return times;
}

const model = await startServer({ kind: 'model', reply: Array(100).fill('word').join(' ') }, { name: 'model' });
const config = {
  defaultModel: 'fixture:small',
  detectOllama: false,
  providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
};
const targets: Array<{ label: string; root?: string }> = [];
if (flags.before) targets.push({ label: 'before', root: flags.before });
targets.push({ label: 'this checkout' });
header(`/metrics under ${SCRAPERS} scrapers in parallel: the median streamed turn`, [
  `${TURNS} streamed turns of 100 tokens one after the other, alone, then with ${SCRAPERS} scrapers of /metrics on the A2A port, each scraping again as soon as answered`,
]);
try {
  for (const target of targets) {
    // Every turn let in: what is measured is what the scrapes cost them (earlier code knows no `admission`).
    const server: ServerProcess = await startServer(
      {
        kind: 'harness',
        dataDir: tempDir(`scrapers-${target.label.replace(/\W/g, '-')}`),
        config: target.root ? config : { ...config, admission: ADMIT_ALL },
      },
      { name: target.label, root: target.root },
    );
    try {
      for (let i = 0; i < WARM_UP; i++) await turn(server.url);
      const alone = summarize(await turns(server.url));
      const scrapers = startScrapers(`${server.url}/metrics`);
      const started = performance.now();
      const scraped = summarize(await turns(server.url));
      const seconds = (performance.now() - started) / 1000;
      const counts = await scrapers.stop();
      console.log(`\n## ${target.label}`);
      console.log(latencyLine('turn, no scraper', alone));
      console.log(latencyLine(`turn, ${SCRAPERS} scrapers`, scraped));
      console.log(
        `  scrapes: ${(counts.ok / seconds).toFixed(0)}/s answered, ${(counts.refused / seconds).toFixed(0)}/s refused (503), ${counts.failed} failed`,
      );
      const ratio = scraped.median / alone.median;
      verdict(
        ratio <= GOAL_RATIO,
        `${target.label}: the median turn with ${SCRAPERS} scrapers at most x${GOAL_RATIO} the median alone: ${scraped.median.toFixed(1)} against ${alone.median.toFixed(1)} ms, x${ratio.toFixed(2)}`,
      );
    } finally {
      await server.close();
      await model.reset();
    }
  }
  printVerdicts('scrapers');
} finally {
  await model.close();
}
