import pg from 'pg';

/** Waits before reconnecting: at once the first time, then doubling up to the last. */
const RECONNECT_DELAYS_MS = [0, 100, 200, 500, 1000, 2000, 5000];

export interface NotificationListenerOptions {
  /** The database's URL: the listener opens a connection of its own. */
  url: string;
  /** What `pg_stat_activity` shows for the connection (unless the URL sets `application_name`). */
  applicationName: string;
  channels: readonly string[];
  onNotification(channel: string, payload: string): void;
  /** The connection came back (and listens again): notifications sent meanwhile were lost. */
  onReconnect(): void;
  onError(error: unknown, what: string): void;
}

/**
 * One dedicated connection that `LISTEN`s on the given channels for as long as the instance
 * runs. It is a `pg.Client` of its own, never one from the pool: a pooled connection goes back
 * to the pool (or through a transaction pooler) and its `LISTEN` with it. When the connection
 * drops (the server restarts, an administrator ends it, the network fails), it reconnects,
 * listens again and says so through `onReconnect`, so the owner can read whatever it missed.
 */
export class NotificationListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: NotificationListenerOptions) {}

  /** Connects and listens; rejects when the first connection fails. */
  async start(): Promise<void> {
    this.client = await this.connect();
  }

  /** Stops listening and ends the connection; no reconnection follows. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end();
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName,
      keepAlive: true,
    });
    client.on('notification', (message) => this.options.onNotification(message.channel, message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('The LISTEN connection ended.')));
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      return client;
    } catch (error) {
      // Ending a connection that failed to open: its own failure is the one reported.
      client.end().catch(() => undefined);
      throw error;
    }
  }

  /** The current connection failed: report it once, then reconnect. */
  private lost(client: pg.Client, error: unknown): void {
    if (this.closed || client !== this.client) return;
    this.client = undefined;
    this.options.onError(error, 'the LISTEN connection was lost; reconnecting');
    // Releases what is left of the broken connection; its failure was just reported.
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = RECONNECT_DELAYS_MS[Math.min(this.failures, RECONNECT_DELAYS_MS.length - 1)]!;
    this.retry = setTimeout(() => {
      this.connecting = this.reconnect();
    }, delay);
  }

  private async reconnect(): Promise<void> {
    let client: pg.Client;
    try {
      client = await this.connect();
    } catch (error) {
      this.failures++;
      this.options.onError(error, 'reconnecting the LISTEN connection');
      if (!this.closed) this.scheduleReconnect();
      return;
    } finally {
      this.connecting = undefined;
    }
    if (this.closed) {
      await client.end();
      return;
    }
    this.client = client;
    this.failures = 0;
    this.options.onReconnect();
  }
}
