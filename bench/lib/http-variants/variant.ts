/** What every variant of bench/http-servers.ts exports: `start()`, serving on 127.0.0.1:0. */
export interface Running {
  url: string;
  close(): Promise<void>;
}

export const VARIANTS = ['express', 'hono', 'node-http'] as const;
export type VariantName = (typeof VARIANTS)[number];

export async function startVariant(name: VariantName): Promise<Running> {
  const variant = (await import(`./${name}.js`)) as { start(): Promise<Running> };
  return variant.start();
}
