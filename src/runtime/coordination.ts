import type { AgentExecutionEvent } from '@a2a-js/sdk/server';

/**
 * What the task engine needs from the instances that share a store: which instance holds a
 * task for its one turn, the task's events carried to every instance that follows the task,
 * cancel requests carried to the instance running the turn, and turns left behind by an
 * instance that died. One process alone needs none of it to cross a process boundary
 * (`LocalCoordination`); instances sharing PostgreSQL take it from PostgreSQL itself (row
 * leases, `LISTEN/NOTIFY`, the events read back from a table).
 */
export interface Coordination {
  /** This instance's id: unique among the instances sharing the store, new at every start. */
  readonly instanceId: string;

  /**
   * Takes the task for one turn on this instance: the lease's epoch, greater than every earlier
   * lease's of the task, on any instance; undefined when a turn holds it here or elsewhere. The
   * turn's writes carry the epoch, and the store refuses them once another instance took the
   * task over (`turn_fenced`, see `turn-leases.ts`).
   */
  acquireTurn(taskId: string): Promise<number | undefined>;
  /** Gives the task back; resolves once other instances can see it free. */
  releaseTurn(taskId: string): Promise<void>;
  /** Whether a turn holds the task, on any instance. */
  turnHeld(taskId: string): Promise<boolean>;

  /**
   * Hands an event of a turn running here to the other instances following the task, after
   * every event published here before it for the same task. It goes with the store's write of
   * it (the result manager saves once per event, in the order published), so that a task as
   * read and the events after it agree on every instance. Never throws; failures are reported
   * through the `onError` the implementation was given.
   */
  publish(taskId: string, event: AgentExecutionEvent): void;
  /**
   * Says that an event stored already (read back from another instance, or a reply posted here)
   * reached the bus of the turn running here, among its events: the store's write of it by the
   * turn's result manager hands nothing on.
   */
  passedThrough(taskId: string): void;
  /**
   * Hands on, with a write of the task's row, the events published for the task that no write
   * of the store took (published after the result manager stopped, or whose save failed): for
   * when a turn's stream has ended. Never rejects.
   */
  handOn(taskId: string): Promise<void>;
  /**
   * Forgets the events published here for the task that no write took: those of a turn fenced
   * off its task (another instance took it over), which must reach nobody.
   */
  discard(taskId: string): void;
  /**
   * Resolves once every event of the task stored so far by other instances has been delivered
   * to its followers here (never rejects): a turn's end waits for the replies that saw it running.
   */
  caughtUp(taskId: string): Promise<void>;
  /**
   * Relays the task's events published on other instances to `deliver`, in order, each once,
   * starting with the first published after this resolves, until the returned function is called.
   */
  follow(taskId: string, deliver: (event: AgentExecutionEvent) => void): Promise<() => void>;

  /**
   * Asks whichever instance runs the task's turn to end it (this one included): `cancel` ends
   * the task (`CancelTask`), `stop` ends only the turn, keeping what it wrote (`/stop`, CMD-32).
   */
  requestCancel(taskId: string, how?: TurnEnding): Promise<void>;
  /** The handler of cancel and stop requests for turns on this instance; set once, by the engine. */
  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void;
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

  /** Hands over the events published so far, then stops; nothing may be called afterwards. */
  close(): Promise<void>;
}

/** How a turn asked to end from outside ends: the task canceled, or only the turn stopped. */
export type TurnEnding = 'cancel' | 'stop';
