/**
 * One HTTP server of bench/http-servers.ts in a process of its own, so that its CPU time is
 * its own: the variant named in argv[2] says its URL over IPC, answers `cpu` with
 * `process.cpuUsage()`, and exits on `close` or when the parent goes away.
 */
import { startVariant, type VariantName } from './http-variants/variant.js';

const running = await startVariant(process.argv[2] as VariantName);
process.send!({ type: 'ready', url: running.url });
const exit = () => void running.close().finally(() => process.exit(0));
process.on('disconnect', exit);
process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') process.send!({ type: 'cpu', cpu: process.cpuUsage() });
  else exit();
});
