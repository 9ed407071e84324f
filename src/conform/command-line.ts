/**
 * `tiny-harness conform <url>` on the command line: the options, the report on standard output
 * (text, or JSON with `--json`), and the exit code: 0 nothing failed, 1 a check failed, 2 bad
 * usage, 3 the server could not be asked, 4 its card does not declare the extension.
 */
import { parseArgs } from 'node:util';
import { conform, ConformUnreachable } from './conform.js';
import { TRANSPORT_NAMES, type TransportName } from './probe-client.js';
import { formatReport } from './results.js';
import { CONFORM_USAGE } from './usage.js';

export const CONFORM_EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, undeclared: 4 } as const;

export async function runConform(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        header: { type: 'string', multiple: true },
        transport: { type: 'string' },
        only: { type: 'string' },
        command: { type: 'string' },
        'allow-model': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    err.write(`tiny-harness conform: ${(error as Error).message}\n${CONFORM_USAGE}\n`);
    return CONFORM_EXIT.usage;
  }
  const usage = (problem: string) => {
    err.write(`tiny-harness conform: ${problem}\n`);
    return CONFORM_EXIT.usage;
  };
  if (positionals.length !== 1) return usage("give the server's URL, e.g. tiny-harness conform http://127.0.0.1:8080");
  const url = positionals[0]!;
  if (!/^https?:\/\//.test(url)) return usage(`"${url}" is not an http(s) URL`);
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) return usage(`--header "${header}" is not "Name: value"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  let transports: TransportName[] | undefined;
  if (values.transport !== undefined && values.transport.toLowerCase() !== 'all') {
    const wanted = TRANSPORT_NAMES.find((name) => name.toLowerCase() === values.transport!.toLowerCase());
    if (!wanted) return usage(`--transport ${values.transport}: use jsonrpc, http+json, grpc or all`);
    transports = [wanted];
  }
  const only = values.only
    ?.split(',')
    .map((rule) => rule.trim().toUpperCase())
    .filter(Boolean);
  if (only?.some((rule) => !/^CMD-\d+$/.test(rule)))
    return usage(`--only ${values.only}: give rule ids such as CMD-4,CMD-8`);

  let report;
  try {
    report = await conform({
      url: url.replace(/\/+$/, ''),
      headers,
      transports,
      only,
      command: values.command,
      allowModel: values['allow-model'],
    });
  } catch (error) {
    if (!(error instanceof ConformUnreachable)) throw error;
    err.write(`tiny-harness conform: ${error.message}\n`);
    return CONFORM_EXIT.unreachable;
  }
  out.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  if (!report.declared) return CONFORM_EXIT.undeclared;
  return report.summary.fail > 0 ? CONFORM_EXIT.failed : CONFORM_EXIT.ok;
}
