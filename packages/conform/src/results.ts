/**
 * What the kit reports: one result per check, PASS, FAIL (what was seen, and the rule broken
 * in its own words) or SKIP (why it could not be checked from outside).
 */
import { ruleText } from './spec-text.js';
import { COMMANDS_URI, type TransportName } from './probe-client.js';

/** A check passed, failed, or could not be made from outside. */
export type Outcome = 'pass' | 'fail' | 'skip';

/** One check's result. */
export interface CheckResult {
  /** The behaviour rule the check is about (`CMD-4`). */
  rule: string;
  /** What was checked, in a few words. */
  title: string;
  transport?: TransportName;
  outcome: Outcome;
  /** What was seen (a failure), or why it was skipped. */
  detail?: string;
  /** The rule's text, on a failure. */
  ruleText?: string;
}

/** The kit's report on one server. */
/** Whether the card is signed, and, when keys were given (`--card-key`), that its signature verifies (issue 38). */
export interface CardSignatureReport {
  signed: boolean;
  /** Present when keys were given: a card that does not verify is refused, so only `true` is reported. */
  valid?: true;
  kid?: string;
  alg?: string;
}

export interface ConformReport {
  url: string;
  /** The card's signature as read; absent when the card could not be read at all. */
  cardSignature?: CardSignatureReport;
  /** Whether the card declares the Commands extension at all; nothing else is checked when not. */
  declared: boolean;
  /** The command the checks sent, and why that one. */
  command?: string;
  transports: TransportName[];
  results: CheckResult[];
  summary: Record<Outcome, number>;
}

/** Collects results as the checks run. */
export class Results {
  readonly list: CheckResult[] = [];

  constructor(private readonly only: ReadonlySet<string> | undefined) {}

  /** Empty results wanting the same rules, for checks run apart (a transport's) and added after. */
  sibling(): Results {
    return new Results(this.only);
  }

  /** Appends the results of `other`, in their order. */
  add(other: Results): void {
    this.list.push(...other.list);
  }

  /** Whether checks of `rule` are wanted (`--only`). */
  wants(rule: string): boolean {
    return !this.only || this.only.has(rule);
  }

  pass(rule: string, title: string, transport?: TransportName): void {
    this.record({ rule, title, transport, outcome: 'pass' });
  }

  fail(rule: string, title: string, detail: string, transport?: TransportName): void {
    this.record({ rule, title, transport, outcome: 'fail', detail, ruleText: ruleText(rule) });
  }

  skip(rule: string, title: string, why: string, transport?: TransportName): void {
    this.record({ rule, title, transport, outcome: 'skip', detail: why });
  }

  /** Passes when `problem` is undefined, fails with it otherwise. */
  judge(rule: string, title: string, problem: string | undefined, transport?: TransportName): void {
    if (problem === undefined) this.pass(rule, title, transport);
    else this.fail(rule, title, problem, transport);
  }

  private record(result: CheckResult): void {
    if (!this.wants(result.rule)) return;
    this.list.push(
      Object.fromEntries(Object.entries(result).filter(([, value]) => value !== undefined)) as unknown as CheckResult,
    );
  }

  summary(): Record<Outcome, number> {
    const counts: Record<Outcome, number> = { pass: 0, fail: 0, skip: 0 };
    for (const result of this.list) counts[result.outcome] += 1;
    return counts;
  }
}

/** The report for a person: one line per check, the rule quoted under each failure. */
export function formatReport(report: ConformReport): string {
  const lines = [`Commands extension v1 at ${report.url}`];
  if (report.cardSignature) lines.push(`Card signature: ${describeSignature(report.cardSignature)}`);
  if (!report.declared) {
    lines.push(
      `The agent card does not declare the Commands extension (no capabilities.extensions entry with uri "${COMMANDS_URI}"): nothing to check.`,
    );
    return `${lines.join('\n')}\n`;
  }
  if (report.command) lines.push(`Command used: ${report.command}`);
  lines.push(`Transports: ${report.transports.join(', ') || 'none'}`, '');
  for (const result of report.results) {
    const where = result.transport ? ` [${result.transport}]` : '';
    lines.push(`${result.outcome.toUpperCase().padEnd(4)}  ${result.rule.padEnd(6)}  ${result.title}${where}`);
    if (result.detail) lines.push(`              ${result.outcome === 'fail' ? 'seen: ' : ''}${result.detail}`);
    if (result.outcome === 'fail' && result.ruleText) lines.push(`              rule: ${result.ruleText}`);
  }
  const { pass, fail, skip } = report.summary;
  lines.push('', `${pass} passed, ${fail} failed, ${skip} skipped`);
  return `${lines.join('\n')}\n`;
}

function describeSignature(signature: CardSignatureReport): string {
  if (!signature.signed) return 'none (the card is not signed)';
  if (!signature.valid) return 'present, not checked (give --card-key to verify it)';
  return `valid (kid ${JSON.stringify(signature.kid)}, ${signature.alg})`;
}
