#!/usr/bin/env bun
/**
 * gRPC Invoke on the h2c listener: the unary path (grpc-unary.ts) vs connect-node's adapter, same
 * stand-in gateway and dataplane, interleaved rounds. Per call: wall time (closed loop, c=1 and
 * c=16) and CPU time of the server process (gateway + stand-in dataplane) and of the client, from
 * /proc. bun bench/gateway/grpc-ab.ts [--calls=2000] [--rounds=3]
 */
import { readFileSync } from "node:fs";
import { gatewayCaller } from "../../gateway/testing/callers.ts";
import { startStandin } from "./bench.ts";
import { runLoad } from "./load.ts";

const arg = (name: string, def: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const CALLS = Number(arg("calls", "2000"));
const ROUNDS = Number(arg("rounds", "3"));
const cpuMs = (pid: number) => {
  const f = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] as string).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
const target = {
  namespace: "bench",
  run: "echo",
  token: "bench-token",
  body: new TextEncoder().encode('{"n":1}'),
  contentType: "application/json",
};
const servers = {
  unary: await startStandin("elysia", "unary"),
  adapter: await startStandin("elysia", "grpc-adapter"),
};
console.log(
  "| round | gRPC server path | wall ms/call (c=1, sequential) | server CPU ms/call | client CPU ms/call | p50 c=16 ms | req/s c=16 |",
);
console.log("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
for (let round = 1; round <= ROUNDS; round++)
  for (const [name, s] of Object.entries(servers)) {
    const call = gatewayCaller("grpc", s.ports, target);
    for (let i = 0; i < 300; i++) await call();
    const s0 = cpuMs(s.pid);
    const c0 = cpuMs(process.pid);
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) await call();
    const wall = (performance.now() - t0) / CALLS;
    const server = (cpuMs(s.pid) - s0) / CALLS;
    const client = (cpuMs(process.pid) - c0) / CALLS;
    const c16 = await runLoad(call, { concurrency: 16, durationMs: 2000, warmupMs: 300 });
    console.log(
      `| ${round} | ${name} | ${wall.toFixed(3)} | ${server.toFixed(3)} | ${client.toFixed(3)} | ${(c16.p50 / 1000).toFixed(3)} | ${Math.round(c16.rps)} |`,
    );
  }
for (const s of Object.values(servers)) s.stop();
process.exit(0);
