/**
 * The server side of the stand-in gateway benchmark (bench/gateway), in its own process (so the load generator does not
 * share its event loop): a stand-in apiserver, a stand-in runtimed dataplane (real contract, echo
 * handler) and the gateway (`elysia` or `bun` HTTP surface, argv[2]; argv[3] `grpc-adapter` serves gRPC
 * through connect-node's adapter instead of the unary path). Prints one JSON line with the
 * ports, then serves until killed.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { startGateway } from "../gateway.ts";
import { parseOptions } from "../options.ts";
import { startFakeDataplane } from "../testing/fake-dataplane.ts";
import { dataplaneSlice, FakeKube, readyFunctionRun } from "../testing/fake-kube.ts";

const surface = process.argv[2] === "bun" ? "bun" : "elysia";
const kube = new FakeKube().start();
kube.tokens.set("bench-token", "bench");
kube.grant("bench", "bench", "echo");
const dp = startFakeDataplane({ podUID: "pod-1", serves: new Map([["uid-echo", 1]]) });
kube.putSlice(dataplaneSlice("bench", "python", [{ uid: "pod-1", ip: "127.0.0.1", port: dp.port }]));
kube.putRun(
  readyFunctionRun({
    namespace: "bench",
    name: "echo",
    uid: "uid-echo",
    pod: "p",
    podUID: "pod-1",
    attempt: 1,
  }),
);
const tokenFile = join(tmpdir(), `krt-bench-gw-token-${process.pid}`);
writeFileSync(tokenFile, "dataplane-token");
const options = parseOptions(
  [
    "--host=127.0.0.1",
    "--http-port=0",
    "--grpc-port=0",
    "--metrics-port=0",
    "--protocols=http",
    `--dataplane-token-file=${tokenFile}`,
  ],
  {},
);
const gw = await startGateway(options, {
  client: kube.client(),
  log: pino({ level: "warn" }),
  httpSurface: surface,
  grpcThroughAdapter: process.argv[3] === "grpc-adapter",
});
await gw.routes.waitForSync();
console.log(JSON.stringify({ http: gw.ports.http, grpc: gw.ports.grpc, dataplane: dp.port }));
