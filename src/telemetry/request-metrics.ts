import { observed, type Step } from '../a2a/index.js';
import { A2A_METHODS, type HarnessMetrics } from './metrics.js';

/**
 * The `metrics` step: counts every A2A call of every transport by method and outcome, times it
 * (a stream until it ends), and keeps the number of streams open. Outside the error mapping, it
 * sees each failure as the A2A error the client receives.
 */
export function metricsStep(metrics: HarnessMetrics): Step {
  return {
    name: 'metrics',
    around(call, next) {
      const method = A2A_METHODS[call.method];
      const started = performance.now();
      // Counted open from its first read: a stream returned before then never runs, so could
      // never count itself closed. A stream its client left early counts as `ok`: nothing failed.
      let open = false;
      return observed(call, next, {
        opened() {
          open = true;
          metrics.streamOpened(method);
        },
        ended(failure) {
          if (open) metrics.streamClosed(method);
          metrics.requestEnded(method, started, failure);
        },
      });
    },
  };
}
