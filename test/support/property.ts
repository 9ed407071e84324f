/**
 * Property tests: each runs on the seeds that once failed (pinned, so that the case stays
 * checked) and then on a fresh random seed, which the failure prints so that it can be pinned.
 * A seed reproduces its case only as long as the property's generators and `numRuns` stay
 * the same.
 */
import fc from 'fast-check';

export interface PropertyOptions {
  /** Seeds that once failed, each checked on every run. */
  pinnedSeeds?: readonly number[];
  numRuns?: number;
}

/** Runs `property` on each pinned seed, then on a fresh one; throws on the first failure, naming its seed. */
export function checkProperty<Ts>(name: string, property: fc.IProperty<Ts>, options: PropertyOptions = {}): void {
  const { pinnedSeeds = [], numRuns } = options;
  for (const seed of [...pinnedSeeds, freshSeed()]) {
    const details = fc.check(property, { seed, numRuns });
    if (!details.failed) continue;
    const pinned = pinnedSeeds.includes(seed);
    const error = details.errorInstance;
    throw new Error(
      `property "${name}" failed on ${pinned ? 'its pinned' : 'a fresh'} seed ${seed}` +
        ` with the counterexample ${fc.stringify(details.counterexample)}:\n` +
        (error instanceof Error ? error.message : String(error)) +
        (pinned ? '' : `\nTo check this case on every run, add ${seed} to its pinnedSeeds.`),
      { cause: error },
    );
  }
}

/** A random 32-bit seed, as fast-check draws its own. */
function freshSeed(): number {
  return (Math.random() * 0x1_0000_0000) | 0;
}
