/** What the kit leaves behind: the tasks it created, canceled at the end where the server allows. */
import type { Client } from '@a2a-js/sdk/client';
import { within, type Probe } from './command-checks.js';

/** How long the clean-up waits for a CancelTask. */
const CANCEL_WAIT_MS = 5_000;

/**
 * Cancels the tasks the kit created, all at once, each given `CANCEL_WAIT_MS`: a clean-up, not
 * a check. (One after another, every task whose CancelTask a server never answers cost the
 * whole wait: 10 s against the SDK example, bench/RESULTS.md.)
 */
export async function cancelCreated(probe: Pick<Probe, 'created'>, client: Client | undefined): Promise<void> {
  if (!client) return;
  await Promise.all(
    [...probe.created].map((id) =>
      within(client.cancelTask({ tenant: '', id, metadata: {} }), 'CancelTask', CANCEL_WAIT_MS).catch(() => undefined),
    ),
  );
}
