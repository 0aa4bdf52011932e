#!/usr/bin/env bun
/**
 * runtimed's own hop, without a cluster: the dataplane server (in a child process, as in a pod)
 * forwarding to a stand-in Runtime Server that answers at once (another process), vs that stand-in
 * called directly, vs a plain Bun HTTP echo. Auth is a pre-seeded allow decision (the cached
 * path every call takes after the first). `bun bench/function-invoke/hop.ts [--duration-ms 3000]`
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  dataplaneClient,
  encodeInvokeRequest,
  encodeServerInvokeRequest,
} from "../../runtimed/dataplane/dataplane-client.ts";
import { runtimeServerClients } from "../../runtimed/runtime-server/client.ts";
import { closedLoop } from "./load.ts";
import { rawUnary } from "./raw-client.ts";

const { values: args } = parseArgs({
  options: {
    "duration-ms": { type: "string", default: "3000" },
    "warmup-ms": { type: "string", default: "500" },
    concurrency: { type: "string", default: "1,8,64" },
  },
});
const socket = join(tmpdir(), `krt-hop-${process.pid}.sock`);
rmSync(socket, { force: true });
async function started(p: Bun.Subprocess<"ignore", "pipe", "inherit">): Promise<string> {
  const reader = p.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return new TextDecoder().decode(value).trim();
}
const stub = Bun.spawn(
  ["bun", join(import.meta.dir, "../../runtimed/testing/stub-function-server.ts"), socket],
  { stdout: "pipe", stderr: "inherit" },
);
await started(stub);
const dp = Bun.spawn(
  ["bun", join(import.meta.dir, "../../runtimed/testing/standalone-dataplane.ts"), socket],
  { stdout: "pipe", stderr: "inherit" },
);
const port = Number(await started(dp));
const echo = Bun.spawn(["bun", join(import.meta.dir, "echo-server.ts")], {
  stdout: "pipe",
  stderr: "inherit",
});
const echoPort = Number(await started(echo));

const body = new TextEncoder().encode(JSON.stringify({ hello: "world", n: 42 }));
const fence = { namespace: "ns", runName: "f", runUid: "u1", podUid: "pod", attempt: 1 };
const client = dataplaneClient({ baseUrl: `http://127.0.0.1:${port}`, token: "t" });
const server = runtimeServerClients(socket).functions;
const dpRaw = {
  url: `http://127.0.0.1:${port}/kruntimes.dataplane.v1.FunctionDataplaneService/Invoke`,
  headers: { authorization: "Bearer t" },
};
const serverRaw = {
  url: "http://runtime-server/kruntimes.runtime.v1.FunctionService/Invoke",
  unix: socket,
  headers: {},
};
let i = 0;
const calls: Record<string, () => Promise<unknown>> = {
  "raw → runtimed dataplane → stub": () =>
    rawUnary(dpRaw, encodeInvokeRequest({ fence, invocationId: `r${i++}`, body })),
  "raw → stub Runtime Server": () =>
    rawUnary(
      serverRaw,
      encodeServerInvokeRequest({ runUid: "u1", attempt: 1, invocationId: `s${i++}`, body }),
    ),
  "connect-web → runtimed dataplane → stub": () =>
    client.invoke({ fence, invocationId: "i", body, contentType: "application/json" }),
  "connect-web → stub Runtime Server": () =>
    server.invoke({ runUid: "u1", attempt: 1, invocationId: "i", body }),
  "Bun HTTP echo": async () =>
    (await fetch(`http://127.0.0.1:${echoPort}/`, { method: "POST", body })).arrayBuffer(),
};
try {
  for (const c of (args.concurrency as string).split(",").map(Number))
    for (const [name, call] of Object.entries(calls)) {
      const r = await closedLoop(
        async () => void (await call()),
        c,
        Number(args["duration-ms"]),
        Number(args["warmup-ms"]),
      );
      console.log(
        `c=${String(c).padEnd(3)} ${name.padEnd(40)} p50 ${r.latency.p50.toFixed(3)} ms  p95 ${r.latency.p95.toFixed(3)}  p99 ${r.latency.p99.toFixed(3)}  ${Math.round(r.perSecond)}/s  failures ${r.failures}${r.firstFailure ? ` ${r.firstFailure}` : ""}`,
      );
    }
} finally {
  for (const p of [stub, dp, echo]) p.kill();
  rmSync(socket, { force: true });
}
