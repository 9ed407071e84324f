import { startTestHarness, collect, sendStream } from '../test/e2e/support.ts';
const h = await startTestHarness({ script: { reply: 'one two three' } });
const client = await h.client('JSONRPC');
const events = await collect(sendStream(client, 'hi'));
const taskId = (events[0]!.payload!.value as any).id;
const rest = await collect(client.resubscribeTask({ tenant: '', id: taskId }, { serviceParameters: { 'Last-Event-ID': '1' } }));
for (const e of rest) console.log(e.payload?.$case, JSON.stringify((e.payload?.value as any).metadata), (e.payload?.value as any).status?.state);
await h.close();
