/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or BENCH_CPU_PROF=<dir> for the benchmarks'
 * server children): the functions and packages with the most self time, and the functions
 * with the most inclusive time (time with them on the stack).
 *
 *   node --import tsx bench/lib/profile-summary.ts <file.cpuprofile> [--top 30] [--match text]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, match: { type: 'string' } },
});
const TOP = Number(values.top);
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function where(url: string): string {
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) {
    const rest = url.slice(at + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.includes('/src/')) return `src/${url.split('/src/')[1]}`;
  if (url.includes('/bench/')) return `bench/${url.split('/bench/')[1]}`;
  if (url.startsWith('node:')) return url;
  return url || '(native)';
}

const key = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const pkgSelf = new Map<string, number>();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  const node = byId.get(profile.samples[i]!);
  if (!node) continue;
  const name = node.callFrame.functionName;
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') {
    self.set(name, (self.get(name) ?? 0) + dt);
    if (name !== '(idle)') total += dt;
    continue;
  }
  total += dt;
  self.set(key(node), (self.get(key(node)) ?? 0) + dt);
  const pkg = where(node.callFrame.url).replace(/:.*$/, '');
  pkgSelf.set(
    pkg.startsWith('src/') ? 'src (this project)' : pkg,
    (pkgSelf.get(pkg.startsWith('src/') ? 'src (this project)' : pkg) ?? 0) + dt,
  );
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const k = key(byId.get(id)!);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
  }
}

const print = (title: string, map: Map<string, number>, filter?: string) => {
  console.log(`\n${title}`);
  const rows = [...map]
    .filter(([k]) => !filter || k.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP);
  for (const [k, v] of rows)
    console.log(`${v.toFixed(0).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(
  `${positionals[0]}: ${(total / 1000).toFixed(2)} s busy (not idle) of ${((profile.endTime - profile.startTime) / 1e6).toFixed(2)} s`,
);
print('self time by package', pkgSelf);
print('self time by function', self);
print('inclusive time by function', inclusive, values.match);
