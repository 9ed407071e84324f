import { HarnessError } from '../../errors.js';

/** A turn's place under the {@link TurnLimit}, held until the turn's stream has stored its last event. */
export interface TurnPlace {
  /** Gives the place back; only the first call counts. */
  release(): void;
}

/**
 * The most turns in flight on this instance at once. A turn holds memory (its model request,
 * its stream's events, its writes) from its reservation until its stream has stored its last
 * event, and that is how long it counts: when the store falls behind, a turn whose model has
 * answered still waits for its writes. Without a bound, turns piled up faster than the store
 * took their writes (RSS from 94 to 466 MB in 5 minutes, 1,121 tasks left WORKING); with one,
 * the turn past it is refused at once, retryably (`turns_at_limit`), before anything is stored.
 * Commands are not turns and never count.
 */
export class TurnLimit {
  private taken = 0;

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new RangeError(`a turn limit must be at least 1, not ${max}`);
  }

  /** Turns holding a place now. */
  get inFlight(): number {
    return this.taken;
  }

  /**
   * Throws `HarnessError('turns_at_limit')` when every place is taken: a look before work that a
   * refusal would waste (storing a sub-task). It takes nothing: {@link take} decides.
   */
  check(): void {
    if (this.taken >= this.max) throw turnsAtLimit(this.max);
  }

  /** Takes a place for one turn, or throws `HarnessError('turns_at_limit')` when every place is taken. */
  take(): TurnPlace {
    this.check();
    return this.takePastLimit();
  }

  /**
   * Takes a place even when every place is taken: for a turn that goes on with work admitted
   * before (one resumed after `/approve`), which a refusal would lose, since its answers are
   * stored already. Counted all the same, so that new turns wait for it.
   */
  takePastLimit(): TurnPlace {
    this.taken++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.taken--;
      },
    };
  }
}

function turnsAtLimit(max: number): HarnessError {
  return new HarnessError(
    'turns_at_limit',
    `This server is at its limit of ${max} running turn${max === 1 ? '' : 's'}. ` +
      'Send the message again in a few seconds, once one has finished. Commands work meanwhile.',
  );
}
