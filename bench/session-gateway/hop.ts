#!/usr/bin/env bun
/**
 * The gateway's own hop for a session Exec, without a cluster: the gateway in-process against a
 * stand-in apiserver and a stand-in runtimed SessionService (the real contract, fence checked,
 * `echo` answered from memory), `exec echo hi` sequential over Connect binary, direct to the
 * stand-in vs through the gateway, in interleaved rounds. `bun bench/session-gateway/hop.ts
 * [--execs 400] [--rounds 3]`.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Run } from "@kruntimes/api";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";

import { startGateway } from "../../gateway/gateway.ts";
import { parseOptions } from "../../gateway/options.ts";
import { createClient, createConnectTransport, pino } from "../../gateway/session/testing/clients.ts";
import { startStandinSessionDataplane } from "../../gateway/session/testing/standin-session-dataplane.ts";
import { dataplaneSlice, FakeKube, readyFunctionRun } from "../../gateway/testing/fake-kube.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: args } = parseArgs({
  options: { execs: { type: "string", default: "400" }, rounds: { type: "string", default: "3" } },
});
const kube = new FakeKube().start();
kube.tokens.set("t", "u");
kube.grant("u", "ns", "box", "session");
const dp = startStandinSessionDataplane({ podUID: "p1", serves: new Map([["uid", 1]]) });
kube.putSlice(dataplaneSlice("ns", "bash", [{ uid: "p1", ip: "127.0.0.1", port: dp.port }]));
const run = readyFunctionRun({
  namespace: "ns",
  name: "box",
  uid: "uid",
  pod: "p",
  podUID: "p1",
  attempt: 1,
});
(run as unknown as { spec: unknown }).spec = { runtime: "bash", mode: { session: {} } };
kube.putRun(run as Run);
const tokenFile = join(tmpdir(), `krt-sessgw-hop-${process.pid}`);
writeFileSync(tokenFile, "x");
const gw = await startGateway(
  parseOptions(
    [
      "--host=127.0.0.1",
      "--http-port=0",
      "--grpc-port=0",
      "--metrics-port=0",
      "--protocols=http",
      `--dataplane-token-file=${tokenFile}`,
    ],
    {},
  ),
  { client: kube.client(), log: pino({ level: "silent" }) },
);
await gw.routes.waitForSync();
const req = {
  target: { namespace: "ns", run: "box" },
  command: { program: { case: "argv" as const, value: { args: ["echo", "hi"] } } },
};
const direct = createClient(
  SessionService,
  createConnectTransport({ baseUrl: `http://127.0.0.1:${dp.port}`, useBinaryFormat: true }),
);
const via = createClient(
  SessionService,
  createConnectTransport({ baseUrl: `http://127.0.0.1:${gw.ports.http}`, useBinaryFormat: true }),
);
const fence = { "x-kruntimes-run-uid": "uid", "x-kruntimes-pod-uid": "p1", "x-kruntimes-attempt": "1" };
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * xs.length)] as number;
async function measure(call: () => AsyncIterable<unknown>, n: number) {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    for await (const _ of call());
    xs.push(performance.now() - t);
  }
  return xs;
}
const rows: string[] = [];
for (let r = 0; r < Number(args.rounds); r++) {
  const a = await measure(() => direct.exec(req, { headers: fence }), Number(args.execs));
  const b = await measure(
    () => via.exec(req, { headers: { authorization: "Bearer t" } }),
    Number(args.execs),
  );
  rows.push(
    `| ${r + 1} | ${pct(a, 50).toFixed(3)} | ${pct(a, 95).toFixed(3)} | ${pct(b, 50).toFixed(3)} | ${pct(b, 95).toFixed(3)} | ${(pct(b, 50) - pct(a, 50)).toFixed(3)} |`,
  );
}
console.log(
  [
    `Machine: ${JSON.stringify(machineInfo())}. ${args.rounds} rounds × ${args.execs} sequential execs per side (round 1 includes warm-up).`,
    "",
    "| round | direct p50 ms | direct p95 ms | via gateway p50 ms | via gateway p95 ms | hop p50 ms |",
    "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n"),
);
await gw.stop(0);
dp.stop();
kube.stop();
process.exit(0);
