/**
 * `tiny-harness conform <url>` once the command line has parsed it: the report on standard
 * output (text, or JSON with `json`), a server that cannot be asked in one line on standard
 * error, and the exit code (`CONFORM_EXIT`).
 */
import { CardSignatureRefused, conform, ConformUnreachable, type ConformOptions } from './conform.js';
import { CONFORM_EXIT } from './exit-codes.js';
import { formatReport } from './results.js';

/** `runConform`'s options: the kit's, and how to print the report. */
export interface ConformCommand extends ConformOptions {
  /** Print the report as JSON. */
  json?: boolean;
}

/** Runs the kit as the command line does: the report on `out`, a server that cannot be asked on `err`; resolves with the exit code (`CONFORM_EXIT`). */
export async function runConform(
  options: ConformCommand,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let report;
  try {
    report = await conform({ ...options, url: options.url.replace(/\/+$/, '') });
  } catch (error) {
    if (error instanceof CardSignatureRefused) {
      err.write(`error: ${error.message}\n`);
      return CONFORM_EXIT.cardRefused;
    }
    if (!(error instanceof ConformUnreachable)) throw error;
    err.write(`error: ${error.message}\n`);
    return CONFORM_EXIT.unreachable;
  }
  out.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  if (!report.declared) return CONFORM_EXIT.undeclared;
  return report.summary.fail > 0 ? CONFORM_EXIT.failed : CONFORM_EXIT.ok;
}
