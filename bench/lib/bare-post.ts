/**
 * The baseline of bench/push.ts: a bare `node:http` POST, in a process of its own so that its
 * CPU is its own. Given a URL, a count and a body (argv), it POSTs the body that many times, one
 * after the other, with a keep-alive agent and the headers a push notification carries, and
 * prints the CPU milliseconds the POSTs took (user + system), as JSON on standard output.
 */
import { Agent, request } from 'node:http';

const [url, countText, body] = process.argv.slice(2) as [string, string, string];
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/a2a+json',
          'Content-Length': Buffer.byteLength(body),
          'X-A2A-Notification-Token': 'bench-token',
          'X-Tiny-Harness-Generation': '1',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode! < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

for (let i = 0; i < 50; i++) await post(); // warm-up
const before = process.cpuUsage();
const count = Number(countText);
for (let i = 0; i < count; i++) await post();
const used = process.cpuUsage(before);
agent.destroy();
console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, count }));
