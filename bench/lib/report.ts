/**
 * What every benchmark prints the same way: the header (machine, Node, package versions),
 * summaries of timings (median, p90, p99), ratios against the baseline measured in the same
 * run, and PASS/FAIL lines against the issue's goals.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const require = createRequire(join(ROOT, 'package.json'));

/** A package's folder: up from its entry point (some packages do not export package.json). */
export function packageRoot(pkg: string): string {
  const direct = join(ROOT, 'node_modules', pkg);
  if (existsSync(join(direct, 'package.json'))) return direct;
  let dir = dirname(require.resolve(pkg));
  while (
    !existsSync(join(dir, 'package.json')) ||
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== pkg
  ) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json for ${pkg}`);
    dir = parent;
  }
  return dir;
}

export function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(pkg), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** Prints the machine, Node and the versions that matter, then the benchmark's own lines. */
export function header(title: string, lines: string[] = []): void {
  const cpus = os.cpus();
  console.log(`# ${title}`);
  console.log(
    `machine: ${cpus[0]?.model?.trim() ?? 'unknown'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.platform()} ${os.release()}`,
  );
  console.log(
    `node ${process.version}; tiny-harness ${readOwnVersion()}, @a2a-js/sdk ${versionOf('@a2a-js/sdk')}, ` +
      `express ${versionOf('express')}, ai ${versionOf('ai')}, @ai-sdk/openai-compatible ${versionOf('@ai-sdk/openai-compatible')}, ` +
      `kysely ${versionOf('kysely')}, better-sqlite3 ${versionOf('better-sqlite3')}, tsx ${versionOf('tsx')}`,
  );
  console.log(
    `run: ${new Date().toISOString()}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )} (1/5/15 min) at the start; everything on 127.0.0.1 (client, servers and fixture models on this machine)`,
  );
  for (const line of lines) console.log(line);
  console.log('');
}

function readOwnVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

export interface Summary {
  n: number;
  median: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles. */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { n: 0, median: NaN, p90: NaN, p99: NaN, mean: NaN, min: NaN, max: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return {
    n: sorted.length,
    median: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: sorted.reduce((sum, v) => sum + v, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** `12.34 ms`, right-aligned. */
export function ms(value: number, digits = 2, width = 8): string {
  return `${Number.isFinite(value) ? value.toFixed(digits) : '-'}`.padStart(width) + ' ms';
}

export function num(value: number, digits = 0, width = 7): string {
  return `${Number.isFinite(value) ? value.toFixed(digits) : '-'}`.padStart(width);
}

/** `x1.23`: how many times `value` is `base`. */
export function times(value: number, base: number): string {
  return `x${(value / base).toFixed(2)}`;
}

export function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

export function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

/** `median   1.23 ms  p90 ...  p99 ...` for a latency summary. */
export function latencyLine(label: string, s: Summary, extra = '', labelWidth = 34): string {
  return `  ${label.padEnd(labelWidth)} median ${ms(s.median)}   p90 ${ms(s.p90)}   p99 ${ms(s.p99)}   (n=${s.n})${extra ? `   ${extra}` : ''}`;
}

const verdicts: string[] = [];

/** Prints and remembers a PASS/FAIL line; `summary()` repeats them at the end. */
export function verdict(pass: boolean, text: string): boolean {
  const line = `${pass ? 'PASS' : 'FAIL'}: ${text}`;
  verdicts.push(line);
  console.log(`  ${line}`);
  return pass;
}

/** Prints every verdict of this run again, for the runner's summary. */
export function printVerdicts(title: string): void {
  if (!verdicts.length) return;
  console.log(`\n${title}: verdicts`);
  for (const line of verdicts) console.log(`  ${line}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
