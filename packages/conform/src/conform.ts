/**
 * `tiny-harness conform <url>`: does the A2A server at `url` implement the Commands extension
 * v1 as `spec/commands-extension-v1.md` and `spec/behaviour.md` say, as far as can be seen
 * from outside? It needs only what every conforming server has, the card's own commands, and
 * uses only the SDK's client and the specification: nothing of the harness, so that it could
 * be published on its own.
 *
 * It sends commands only, never text a conforming server would give its model, unless asked
 * (`allowModel`: the checks that ordinary messages are not answered as commands). Tasks it
 * created are canceled at the end, where the server allows.
 */
import { checkCardSignature, describeCardSignature, loadCardKeys } from './card-signature.js';
import { randomBytes } from 'node:crypto';
import type { Client } from '@a2a-js/sdk/client';
import { checkCard, commandsEntries, listedCommands, pickCommand } from './card-checks.js';
import type { Message } from '@a2a-js/sdk';
import {
  checkTransport,
  commandText,
  describe,
  isAgentMessage,
  isTask,
  sendBlocking,
  within,
  type Probe,
} from './command-checks.js';
import {
  AuthenticationRequired,
  CardUnreadable,
  clientFor,
  COMMANDS_URI,
  declaredTransports,
  HeaderTap,
  readCard,
  textPart,
  userMessage,
  unreachable,
  type TransportName,
} from './probe-client.js';
import { cancelCreated } from './clean-up.js';
import { Results, type CardSignatureReport, type ConformReport } from './results.js';

/** What to check: the server, and which transports, rules and command. */
export interface ConformOptions {
  url: string;
  /** Sent on every request (auth). */
  headers?: Record<string, string>;
  /** The transports to check; default every one the card declares. */
  transports?: TransportName[];
  /** Only the checks of these rules (`CMD-4`, ...). */
  only?: string[];
  /** The command to send, with arguments if any (`spawn say hi`); default one that takes no arguments. */
  command?: string;
  /** Also check that ordinary messages are not answered as commands (CMD-3): a conforming server gives them to its model. */
  allowModel?: boolean;
  /** A JWKS URL or key file the card's signature must verify with; a card that fails is refused ({@link CardSignatureRefused}). */
  cardKey?: string;
}

/** The server could not be asked at all: no card, or it wants a token the kit was not given. */
export class ConformUnreachable extends Error {}

/** The card's signature does not verify with the keys given (`cardKey`); the message says why. */
export class CardSignatureRefused extends Error {}

/** Checks the server at `options.url`, rule by rule; throws `ConformUnreachable` when it cannot be asked at all. */
export async function conform(options: ConformOptions): Promise<ConformReport> {
  const headers = options.headers ?? {};
  const results = new Results(options.only?.length ? new Set(options.only) : undefined);
  let first;
  try {
    first = await readCard(options.url, headers);
  } catch (error) {
    if (error instanceof AuthenticationRequired) throw new ConformUnreachable(error.message);
    if (error instanceof CardUnreadable)
      throw new ConformUnreachable(`cannot read the agent card of ${options.url}: ${error.message}`);
    throw new ConformUnreachable(unreachable(options.url, error));
  }
  const cardSignature = await signatureOf(first.raw, options.cardKey);
  const declared = declaredTransports(first.card);
  const transports = options.transports ? declared.filter((name) => options.transports!.includes(name)) : declared;
  const report = (extra: Partial<ConformReport> = {}): ConformReport => ({
    url: options.url,
    declared: true,
    cardSignature,
    transports,
    results: results.list,
    summary: results.summary(),
    ...extra,
  });
  if (commandsEntries(first.raw).length === 0) return report({ declared: false });

  checkCard(first, await readCard(options.url, headers).catch(() => undefined), results);
  const [wantedName, ...wantedArgs] = options.command?.trim().split(/\s+/) ?? [];
  const args = wantedArgs.join(' ');
  const { command, why } = pickCommand(listedCommands(first.raw), wantedName);
  if (!command) {
    results.skip('CMD-10', 'every check that sends a command', why);
    return report();
  }
  if (transports.length === 0) {
    results.skip(
      'CMD-8',
      'every check that sends a command',
      `no transport to check (the card declares: ${declared.join(', ') || 'none'})`,
    );
    return report({ command: `/${command.name}${args ? ` ${args}` : ''} (${why})` });
  }

  const probe: Probe = { results, command, ...(args ? { args } : {}), created: new Set(), taskRefs: new Set() };
  const required = commandsEntries(first.raw)[0]?.required === true;
  // The transports are checked at the same time, each on tasks of its own: a run waits for the
  // slowest one, not for their sum. Their results are reported in the card's order.
  const checked = await Promise.allSettled(
    transports.map((transport) => checkOneTransport(probe, transport, first.card, headers, required)),
  );
  const clients = checked.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.client] : []));
  try {
    for (const outcome of checked) {
      if (outcome.status === 'rejected') throw outcome.reason;
      results.add(outcome.value.results);
    }
    // Every check would fail the same way: one line says what to do instead.
    if (checked.some((outcome) => outcome.status === 'fulfilled' && outcome.value.authRefused))
      throw new ConformUnreachable(new AuthenticationRequired().message);
    const client = clients[0]!;
    await checkSubtaskRefs(probe, client);
    if (options.allowModel) await checkNotCommands(probe, transports[0]!, client);
    else
      results.skip(
        'CMD-3',
        'ordinary messages are not answered as commands',
        'a conforming server gives them to its model: run with --allow-model to send them',
      );
  } finally {
    await cancelCreated(probe, clients[0]);
  }
  return report({ command: `/${command.name}${args ? ` ${args}` : ''} (${why})` });
}

/** Every check of one transport, with results of its own; `authRefused` when the server wants a token it was not given. */
async function checkOneTransport(
  probe: Probe,
  transport: TransportName,
  card: Parameters<typeof clientFor>[0],
  headers: Record<string, string>,
  required: boolean,
): Promise<{ client: Client; results: Results; authRefused: boolean }> {
  const own: Probe = { ...probe, results: probe.results.sibling() };
  const tap = new HeaderTap();
  const client = await clientFor(card, transport, headers, tap);
  await checkTransport(own, transport, client, tap);
  if (tap.authRefused) return { client, results: own.results, authRefused: true };
  await checkWithoutActivation(own, transport, card, headers, required);
  return { client, results: own.results, authRefused: false };
}

/** CMD-17: commands work without activating the extension; or, with `required: true`, such a request is refused (CMD-14). */
async function checkWithoutActivation(
  probe: Probe,
  transport: TransportName,
  card: Parameters<typeof clientFor>[0],
  headers: Record<string, string>,
  required: boolean,
): Promise<void> {
  const { results, command } = probe;
  const client = await clientFor(card, transport, headers, new HeaderTap(), false);
  try {
    const result = await sendBlocking(client, userMessage(commandText(probe)));
    if (isTask(result)) probe.created.add(result.id);
    if (required)
      results.fail(
        'CMD-14',
        'the entry is required: a request without the extension is refused',
        'the request without A2A-Extensions was answered',
        transport,
      );
    else
      results.judge(
        'CMD-17',
        'a command works without activating the extension',
        isTask(result) && isCommandReply(result.status?.message, command.name)
          ? undefined
          : 'it was not answered as a command',
        transport,
      );
  } catch (error) {
    if (required)
      results.pass('CMD-14', 'the entry is required: a request without the extension is refused', transport);
    else results.fail('CMD-17', 'a command works without activating the extension', describe(error), transport);
  }
}

/** A reply naming the command, or the extension (whose metadata CMD-5 judges apart). */
function isCommandReply(message: Message | undefined, name: string): boolean {
  return (
    isAgentMessage(message) &&
    (message?.metadata?.['command'] === name || (message?.extensions ?? []).includes(COMMANDS_URI))
  );
}

/** CMD-30: every `task_ref` a reply named is a task `GetTask` finds. */
async function checkSubtaskRefs(probe: Probe, client: Client): Promise<void> {
  const title = 'task_ref names a task GetTask finds';
  if (probe.taskRefs.size === 0)
    return probe.results.skip('CMD-30', title, `the command sent (/${probe.command.name}) created no sub-task`);
  for (const ref of probe.taskRefs) {
    try {
      await within(client.getTask({ tenant: '', id: ref, historyLength: 0 }), 'GetTask');
      probe.results.pass('CMD-30', `${title} (${ref})`);
    } catch (error) {
      probe.results.fail('CMD-30', `${title} (${ref})`, describe(error));
    }
  }
}

/**
 * CMD-2, CMD-3: a leading space, a capitalized name, a second part and a name nobody registers
 * are ordinary messages, not commands. Each goes to a new task, which is then canceled.
 */
async function checkNotCommands(probe: Probe, transport: TransportName, client: Client): Promise<void> {
  const name = probe.command.name;
  const unregistered = `zz-conform-${randomBytes(4).toString('hex')}`;
  const cases: { rule: string; title: string; message: ReturnType<typeof userMessage> }[] = [
    { rule: 'CMD-3', title: `" /${name}" (a leading space) is not a command`, message: userMessage(` /${name}`) },
    {
      rule: 'CMD-3',
      title: `"/${name[0]!.toUpperCase()}${name.slice(1)}" (capitalized) is not a command`,
      message: userMessage(`/${name[0]!.toUpperCase()}${name.slice(1)}`),
    },
    {
      rule: 'CMD-2',
      title: `"/${name}" with a second part is not a command`,
      message: userMessage('', {}, [textPart(`/${name}`), textPart('a second part')]),
    },
    {
      rule: 'CMD-3',
      title: `"/${unregistered}" (not registered) is not a command`,
      message: userMessage(`/${unregistered}`),
    },
  ];
  for (const { rule, title, message } of cases) {
    try {
      const result = await sendBlocking(client, message, true);
      if (isTask(result)) probe.created.add(result.id);
      const answered = isTask(result) && typeof result.status?.message?.metadata?.['command'] === 'string';
      probe.results.judge(
        rule,
        title,
        answered
          ? `answered as a command: metadata.command is "${String(result.status?.message?.metadata?.['command'])}"`
          : undefined,
        transport,
      );
    } catch (error) {
      probe.results.fail(rule, title, `the message was refused: ${describe(error)}`, transport);
    }
  }
}

/**
 * Whether the card is signed, and with `cardKey` whether its signature verifies with those keys
 * (issue 38); a card that does not is refused: nothing it says can be trusted.
 */
async function signatureOf(raw: Record<string, unknown>, cardKey: string | undefined): Promise<CardSignatureReport> {
  const signed = Array.isArray(raw['signatures']) && raw['signatures'].length > 0;
  if (cardKey === undefined) return { signed };
  let keys;
  try {
    keys = await loadCardKeys(cardKey);
  } catch (error) {
    throw new ConformUnreachable((error as Error).message);
  }
  const check = await checkCardSignature(raw, keys);
  if (!check.valid) throw new CardSignatureRefused(`refused the agent card: ${describeCardSignature(check)}`);
  return { signed, valid: true, kid: check.kid, alg: check.alg };
}
