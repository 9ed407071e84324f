/**
 * When another instance is dead, judged from this instance's own heartbeats.
 *
 * An instance whose heartbeat is older than the lease is not dead when the database could not
 * be written for part of that time: a lock on the heartbeat table (or a stalled server) holds
 * every instance's heartbeat back alike, and right after it every heartbeat is old, the live
 * ones' too. So the lease is counted in time the database demonstrably took writes, by its own
 * clock: the time between two of this instance's heartbeats counts at most one heartbeat
 * interval, whatever held the second one back (a lock, a lost connection, this process paused),
 * and time before this instance's first heartbeat does not count. An instance whose heartbeat
 * has not changed through a lease of such time missed about three heartbeats of its own while
 * the database took this one's: it is dead (`kill -9`, a lost machine).
 */

/**
 * The moment, by the database's clock, from which `beats` (this instance's heartbeat write times,
 * oldest first) count `leaseMs` of writable time, each gap counting at most `intervalMs` (from its
 * start, the last moment the database was known writable); undefined when they count less.
 * Another instance whose last heartbeat is older than that moment is dead. In whole ms, rounded
 * down (to the earlier moment), as heartbeats are stored.
 */
export function deadBefore(beats: readonly number[], leaseMs: number, intervalMs: number): number | undefined {
  const moment = countedFrom(beats, leaseMs, intervalMs)?.moment;
  return moment === undefined ? undefined : Math.floor(moment);
}

function countedFrom(
  beats: readonly number[],
  leaseMs: number,
  intervalMs: number,
): { moment: number; index: number } | undefined {
  let remaining = leaseMs;
  for (let i = beats.length - 1; i > 0; i--) {
    const counted = Math.min(beats[i]! - beats[i - 1]!, intervalMs);
    if (counted >= remaining) return { moment: beats[i - 1]! + counted - remaining, index: i - 1 };
    remaining -= counted;
  }
  return undefined;
}

/** This instance's recent heartbeat write times, as many as a lease of writable time takes. */
export class HeartbeatHistory {
  private beats: number[] = [];

  constructor(
    private readonly leaseMs: number,
    private readonly intervalMs: number,
  ) {}

  /** This instance's heartbeat was written at `atMs` by the database's clock. */
  written(atMs: number): void {
    this.beats.push(atMs);
    const from = countedFrom(this.beats, this.leaseMs, this.intervalMs);
    if (from) this.beats = this.beats.slice(from.index);
  }

  /** Its row was gone (another instance took it for dead): what came before vouches for nothing. */
  forget(): void {
    this.beats = [];
  }

  /** See `deadBefore`. */
  deadBefore(): number | undefined {
    return deadBefore(this.beats, this.leaseMs, this.intervalMs);
  }
}
