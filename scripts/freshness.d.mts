/** Types of freshness.mjs, for the tests that import it. */
export declare const BUILD_INPUTS: readonly string[];
export declare const BUNDLE_INPUTS: readonly string[];
export declare const BUILD_OUTPUTS: readonly string[];
export declare function staleness(
  root: string,
  outputs: readonly string[],
  inputs: readonly string[],
): string | undefined;
