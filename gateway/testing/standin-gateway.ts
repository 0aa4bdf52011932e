/**
 * A gateway with every listener (http, h2c, TLS) in its own process, in front of a stand-in
 * apiserver and a stand-in runtimed dataplane (the real contracts): for tests that must see the
 * gateway from outside — slow clients, closed connections, its memory. Usage:
 * `bun gateway/testing/standin-gateway.ts <tls.crt> <tls.key> [gateway flags…]`; prints one JSON
 * line with the ports, then serves until killed. Token `alice-token` may invoke `team/echo`.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { startGateway } from "../gateway.ts";
import { parseOptions } from "../options.ts";
import { startFakeDataplane } from "./fake-dataplane.ts";
import { dataplaneSlice, FakeKube, readyFunctionRun } from "./fake-kube.ts";

const [cert, key, ...flags] = process.argv.slice(2);
const kube = new FakeKube().start();
kube.tokens.set("alice-token", "alice");
kube.grant("alice", "team", "echo");
const dp = startFakeDataplane({ podUID: "pod-1", serves: new Map([["uid-echo", 1]]) });
kube.putSlice(dataplaneSlice("team", "python", [{ uid: "pod-1", ip: "127.0.0.1", port: dp.port }]));
kube.putRun(
  readyFunctionRun({
    namespace: "team",
    name: "echo",
    uid: "uid-echo",
    pod: "p",
    podUID: "pod-1",
    attempt: 1,
  }),
);
const tokenFile = join(tmpdir(), `krt-standin-gw-token-${process.pid}`);
writeFileSync(tokenFile, "dataplane-token");
const options = parseOptions(
  [
    "--host=127.0.0.1",
    "--http-port=0",
    "--grpc-port=0",
    "--https-port=0",
    "--metrics-port=0",
    `--tls-cert-file=${cert}`,
    `--tls-key-file=${key}`,
    `--dataplane-token-file=${tokenFile}`,
    ...flags,
  ],
  {},
);
const gw = await startGateway(options, { client: kube.client(), log: pino({ level: "warn" }) });
await gw.routes.waitForSync();
console.log(JSON.stringify(gw.ports));
