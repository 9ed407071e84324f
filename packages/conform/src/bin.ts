#!/usr/bin/env node
/**
 * `conform <url>`, the package's bin: the kit from a terminal, with the options of
 * `tiny-harness conform` (see `--help`), the report on standard output and its exit code.
 */
import { parseArgs } from 'node:util';
import { runConform } from './command-line.js';
import { CONFORM_EXIT, CONFORM_EXIT_MEANINGS } from './exit-codes.js';
import { TRANSPORT_NAMES, type TransportName } from './probe-client.js';

const HELP = `Usage: conform <url> [options]

Check, rule by rule, that the A2A server at <url> implements the Commands extension v1.

Options:
  --transport <name>   check only this transport: jsonrpc, http+json, grpc or all (default: all)
  --only <rules>       only the checks of these rules, comma-separated, e.g. CMD-4,CMD-8
  --command <command>  the command to send, with its arguments (default: one that takes none)
  --allow-model        also send ordinary messages, which a conforming server gives to its model
  --header <header>    send this header on every request, "Name: value" (repeatable)
  --card-key <key>     verify the card's signature with this JWKS URL or key file; refuse it if it fails
  --json               print the report as JSON
  -h, --help           show this help

Exit codes:
${Object.entries(CONFORM_EXIT)
  .map(([name, code]) => `  ${code}  ${CONFORM_EXIT_MEANINGS[name as keyof typeof CONFORM_EXIT]}`)
  .join('\n')}
`;

/** The command line read, or the reason it cannot be (a usage error). */
function readArguments(
  argv: string[],
): { help: true } | { help: false; url: string; run: Parameters<typeof runConform>[0] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      transport: { type: 'string' },
      only: { type: 'string' },
      command: { type: 'string' },
      'allow-model': { type: 'boolean' },
      header: { type: 'string', multiple: true },
      'card-key': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true };
  if (positionals.length !== 1) throw new Error('give exactly one <url>, e.g. http://127.0.0.1:8080');
  const url = positionals[0]!;
  if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`"${url}" is not an http(s) URL`);
  const transport = values.transport?.toUpperCase();
  if (transport !== undefined && transport !== 'ALL' && !TRANSPORT_NAMES.includes(transport as TransportName))
    throw new Error(`--transport must be jsonrpc, http+json, grpc or all, not "${values.transport}"`);
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new Error(`--header "${header}" is not "Name: value"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const only = values.only
    ?.split(',')
    .map((rule) => rule.trim().toUpperCase())
    .filter(Boolean);
  return {
    help: false,
    url,
    run: {
      url,
      headers,
      transports: transport === undefined || transport === 'ALL' ? undefined : [transport as TransportName],
      only,
      command: values.command,
      allowModel: values['allow-model'] === true,
      cardKey: values['card-key'],
      json: values.json === true,
    },
  };
}

let parsed;
try {
  parsed = readArguments(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
  process.exit(CONFORM_EXIT.usage);
}
if (parsed.help) {
  process.stdout.write(HELP);
  process.exit(CONFORM_EXIT.ok);
}
process.exit(await runConform(parsed.run));
