/**
 * What the task engine needs from the instances that share a store, besides the task logs the
 * store keeps (and the wake-ups it sends when one grows): which instance holds a task for its
 * one turn, cancel requests carried to the instance running the turn, and turns left behind by
 * an instance that died. One process alone needs none of it to cross a process boundary
 * (`LocalCoordination`); instances sharing PostgreSQL take it from PostgreSQL itself (row
 * leases, `LISTEN/NOTIFY`, heartbeats).
 */
export interface Coordination {
  /** This instance's id: unique among the instances sharing the store, new at every start. */
  readonly instanceId: string;

  /**
   * Takes the task for one turn on this instance: the lease's epoch, greater than every earlier
   * lease's of the task, on any instance; undefined when a turn holds it here or elsewhere, or
   * (`unlessQueued`: a message sent to the task) when messages wait in the task's queue, which
   * go first (spec/while-busy-extension-v1.md). The turn's writes carry the epoch, and the store
   * refuses them once another instance took the task over (`turn_fenced`, see `turn-leases.ts`).
   */
  acquireTurn(taskId: string, options?: { unlessQueued?: boolean }): Promise<number | undefined>;
  /**
   * Gives the task back; resolves once other instances can see it free, with whether messages
   * wait in the task's queue (for the queue to run the next), undefined when it cannot say.
   */
  releaseTurn(taskId: string): Promise<boolean | undefined>;
  /** Whether a turn holds the task, on any instance. */
  turnHeld(taskId: string): Promise<boolean>;

  /**
   * Asks whichever instance runs the task's turn to end it (this one included): `cancel` ends
   * the task (`CancelTask`), `stop` ends only the turn, keeping what it wrote (`/stop`, CMD-32).
   */
  requestCancel(taskId: string, how?: TurnEnding): Promise<void>;
  /** The handler of cancel and stop requests for turns on this instance; set once, by the engine. */
  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void;
  /**
   * Tells the other instances that the task is free while its queue holds messages this
   * instance will not run (it drains): one of them runs the queue's head (`TurnQueue`).
   */
  offerQueue(taskId: string): Promise<void>;
  /** The handler of queues offered by other instances; set once, by the queue. */
  onQueueOffered(handler: (taskId: string) => void): void;
  /**
   * The handler of turns left held by an instance that stopped without ending them (`kill -9`,
   * a lost machine): called on one surviving instance, once per dead instance, after its
   * heartbeat is older than the lease time. The leases are released before the call, so the
   * handler checks each task under its write lock: a task a new turn took meanwhile is not
   * interrupted again. A rejection is reported through `onError`; the tasks are not offered again.
   */
  onOrphanedTurns(handler: (taskIds: string[]) => Promise<void>): void;
  /**
   * How long, in ms, a task in flight with no lease must have been unchanged before start-up
   * recovery takes it for cut short: 0 alone (nobody else can be ending a turn), the lease time
   * when shared (another instance may be between releasing its lease and storing the end).
   */
  readonly settleMs: number;

  /** Sends the wake-ups due, gives back this instance's leases, then stops; nothing may be called afterwards. */
  close(): Promise<void>;
}

/** How a turn asked to end from outside ends: the task canceled, or only the turn stopped. */
export type TurnEnding = 'cancel' | 'stop';
