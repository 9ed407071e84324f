/**
 * A strict reader of Prometheus's text exposition format (0.0.4), for the metrics tests: every
 * line must be a HELP, a TYPE or a sample of the family typed last, label values escaped as
 * the format says, histograms whole (cumulative buckets ending at +Inf equal to `_count`).
 * Anything else throws, naming the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 120))})`;
    if (line === '') return;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment;
      if (!NAME.test(name!)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name!) ?? { name: name!, type: 'untyped', help: '', samples: [] };
      if (family.samples.length > 0) throw new Error(`${where}: ${kind} after the family's samples`);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest!)) throw new Error(`${where}: unknown type`);
        family.type = rest!;
      } else family.help = rest!;
      families.set(name!, family);
      current = family;
      return;
    }
    if (line.startsWith('#')) return;
    const sample = parseSample(line, where);
    const family = current;
    if (!family || !SUFFIXES[family.type]!.some((suffix) => sample.name === family.name + suffix))
      throw new Error(`${where}: a sample outside its family`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function parseSample(line: string, where: string): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!match) throw new Error(`${where}: not a sample`);
  const [, name, braces, valueText] = match;
  return {
    name: name!,
    labels: braces ? parseLabels(braces.slice(1, -1), where) : {},
    value: parseValue(valueText!, where),
  };
}

function parseLabels(body: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = body;
  while (rest.length > 0) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
    if (!match || !LABEL_NAME.test(match[1]!)) throw new Error(`${where}: bad labels at ${JSON.stringify(rest)}`);
    if (match[1]! in labels) throw new Error(`${where}: label ${match[1]} twice`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(match[0].length);
    if (match[3] === '' && rest.length > 0) throw new Error(`${where}: labels not separated by commas`);
  }
  return labels;
}

/** As Go's ParseFloat reads it, which the format names: `NaN` in any case (prom-client writes `Nan`), `±Inf`. */
function parseValue(text: string, where: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`${where}: value ${text} is not a number`);
  return value;
}

/** Per label set: buckets cumulative and ending at +Inf, which equals `_count`. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...others } = sample.labels;
    const key = JSON.stringify(others);
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) entry.buckets.push([parseValue(le ?? '', `${family.name} le`), sample.value]);
    else if (sample.name.endsWith('_count')) entry.count = sample.value;
    else entry.sum = sample.value;
  }
  for (const [key, { buckets, count, sum }] of series) {
    const what = `${family.name}${key}`;
    if (count === undefined || sum === undefined) throw new Error(`${what}: no _count or _sum`);
    if (buckets.at(-1)?.[0] !== Infinity) throw new Error(`${what}: the last bucket is not +Inf`);
    for (let i = 1; i < buckets.length; i++)
      if (buckets[i]![0] <= buckets[i - 1]![0] || buckets[i]![1] < buckets[i - 1]![1])
        throw new Error(`${what}: buckets not cumulative`);
    if (buckets.at(-1)![1] !== count) throw new Error(`${what}: the +Inf bucket is not _count`);
  }
}

/** The value of the sample `name` whose labels include `labels`, summed over the rest; 0 when none. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const family of families.values())
    for (const sample of family.samples)
      if (sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
        total += sample.value;
  return total;
}

/** Every label value of every sample. */
export function labelValues(families: Map<string, Family>): Set<string> {
  const values = new Set<string>();
  for (const family of families.values())
    for (const sample of family.samples) for (const value of Object.values(sample.labels)) values.add(value);
  return values;
}
