/**
 * Sequential timing with a budget: warm-up calls, then timed calls until `count` are done or
 * `budgetMs` has passed (but at least `min`), so a slow baseline cannot stretch a run.
 */
import { performance } from 'node:perf_hooks';
import { summarize, type Summary } from './report.js';

export interface Budget {
  warmUp: number;
  count: number;
  min: number;
  budgetMs: number;
}

export async function timed(fn: () => Promise<unknown>, budget: Budget): Promise<Summary> {
  for (let i = 0; i < budget.warmUp; i++) await fn();
  const times: number[] = [];
  const deadline = performance.now() + budget.budgetMs;
  while (times.length < budget.count && (times.length < budget.min || performance.now() < deadline)) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return summarize(times);
}
