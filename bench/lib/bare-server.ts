/**
 * The bare SDK agent as a program of its own, for bench/startup.ts: serves on 127.0.0.1 and
 * the port given (`--port P`, default 0), says "listening on <url>", and runs until stopped.
 */
import { parseArgs } from 'node:util';
import { startBareSdkAgent } from '../bare-sdk-agent.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
const agent = await startBareSdkAgent({ reply: 'status' }, '127.0.0.1', Number(values.port));
process.stdout.write(`listening on ${agent.url}\n`);
const stop = () => void agent.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
