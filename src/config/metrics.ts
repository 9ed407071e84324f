/** The `metrics` key of the config file: where Prometheus scrapes the harness (docs/operations.md, "Metrics"). */
import * as z from 'zod';

export const metricsSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Whether the harness counts and serves its metrics at `GET /metrics`; off, it does neither.'),
    port: z
      .number()
      .int('must be a whole port number')
      .min(0)
      .max(65_535)
      .optional()
      .describe(
        'Serve `/metrics` on this port only, apart from the A2A port (0 picks a free one); without it, `/metrics` is on the A2A port.',
      ),
    host: z
      .string()
      .min(1)
      .optional()
      .describe("The address `metrics.port` listens on; default: the harness's own (`--host`)."),
    tokenEnv: z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        'must be the name of an environment variable (e.g. METRICS_TOKEN), not a token',
      )
      .optional()
      .describe(
        'The environment variable holding the bearer token a scrape must send (`Authorization: Bearer …`); without it, `/metrics` needs none. The A2A tokens never open it.',
      ),
  })
  .refine((metrics) => metrics.host === undefined || metrics.port !== undefined, {
    message: '"host" needs "port": without its own port, /metrics is served where the A2A routes are',
    path: ['host'],
  });
