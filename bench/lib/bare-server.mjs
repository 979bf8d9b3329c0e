// Baseline for bench/agent.mjs: the least a Node HTTP server can do for `GET /api/bmc/power` — node:http answering a
// fixed JSON body (the simulated board's power answer) on every path. Usage: node bare-server.mjs <port> [host]
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const host = process.argv[3] ?? '127.0.0.1';
const body = Buffer.from('[{"node1":"0","node2":"0","node3":"0","node4":"0"}]');

const server = createServer((req, res) => {
  req.resume(); // drain any body so keep-alive connections stay usable
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
});
server.listen(port, host, () =>
  process.stdout.write(`bare server listening on http://${host}:${server.address().port}\n`),
);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
