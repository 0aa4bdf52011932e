/**
 * The gateway benchmark as a library (krt bench can call `benchGateway`): p50/p95/p99 and
 * requests/s through the gateway over plain HTTP, Connect JSON, Connect binary and gRPC, next to
 * the floors — the same call on the dataplane port directly and a plain Bun echo server — at each
 * concurrency, in one run. `target` says what serves: the in-process stand-in (gateway + stand-in
 * dataplane in a separate process; `surface` elysia or bun) or callers built by the caller.
 */
import {
  type Caller,
  directCaller,
  type GatewayProtocol,
  gatewayCaller,
  startEchoFloor,
} from "../../gateway/testing/callers.ts";
import { type LoadResult, runLoad } from "./load.ts";

export interface Row extends LoadResult {
  path: string;
}

export interface BenchOptions {
  concurrency: number[];
  durationMs: number;
  warmupMs: number;
}

export const PROTOCOLS: GatewayProtocol[] = ["http", "connect-json", "connect-binary", "grpc"];

export async function measure(path: string, caller: Caller, o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const concurrency of o.concurrency) {
    rows.push({
      path,
      ...(await runLoad(caller, { concurrency, durationMs: o.durationMs, warmupMs: o.warmupMs })),
    });
  }
  return rows;
}

/** Starts gateway/testing/standin-server.ts and returns its ports and a stop function. */
export async function startStandin(surface: "elysia" | "bun", grpc: "unary" | "grpc-adapter" = "unary") {
  const child = Bun.spawn(
    ["bun", `${import.meta.dir}/../../gateway/testing/standin-server.ts`, surface, grpc],
    {
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("stand-in server exited before printing its ports");
    text += new TextDecoder().decode(value);
  }
  const ports = JSON.parse(text.split("\n")[0] as string) as {
    http: number;
    grpc: number;
    dataplane: number;
  };
  return { ports, pid: child.pid, stop: () => child.kill() };
}

/** The stand-in run: every gateway protocol, the direct dataplane call and the echo floor. */
export async function benchStandin(
  o: BenchOptions,
  surfaces: ("elysia" | "bun")[] = ["elysia", "bun"],
): Promise<Row[]> {
  const body = new TextEncoder().encode('{"n":1}');
  const target = {
    namespace: "bench",
    run: "echo",
    token: "bench-token",
    body,
    contentType: "application/json",
  };
  const rows: Row[] = [];
  const echo = startEchoFloor();
  try {
    rows.push(...(await measure("floor: Bun echo", echo.caller(body), o)));
  } finally {
    echo.stop();
  }
  for (const surface of surfaces) {
    const s = await startStandin(surface);
    try {
      if (surface === surfaces[0]) {
        const direct = directCaller({
          address: `127.0.0.1:${s.ports.dataplane}`,
          token: "dataplane-token",
          fence: { namespace: "bench", runName: "echo", runUid: "uid-echo", podUid: "pod-1", attempt: 1 },
          body,
          contentType: "application/json",
        });
        rows.push(...(await measure("floor: dataplane direct (connect-binary)", direct, o)));
      }
      const protocols = surface === "elysia" ? PROTOCOLS : (["http", "connect-binary"] as GatewayProtocol[]);
      for (const p of protocols) {
        rows.push(...(await measure(`gateway[${surface}] ${p}`, gatewayCaller(p, s.ports, target), o)));
      }
    } finally {
      s.stop();
    }
  }
  return rows;
}

export function table(rows: Row[]): string {
  const f = (us: number) => (us / 1000).toFixed(3);
  const lines = [
    "| path | conc | calls | errors | req/s | p50 ms | p95 ms | p99 ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.path} | ${r.concurrency} | ${r.calls} | ${r.errors}${r.firstError ? ` (${r.firstError.slice(0, 40)})` : ""} | ${Math.round(r.rps)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.p99)} |`,
    );
  }
  return lines.join("\n");
}
