/**
 * `krt mcp` once its flags are checked: the backend, then the stdio transport or the HTTP server,
 * until the client goes away (stdin ends) or krt is interrupted. Loaded by the command only when
 * it runs, so other krt commands do not load the MCP SDK and zod.
 */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CliError } from "../errors.ts";
import { type BackendDeps, KruntimesBackend } from "./backend.ts";
import { type HttpOptions, serveHttp } from "./http.ts";
import { createMcpServer } from "./server.ts";

export interface ServeOptions {
  backend: BackendDeps;
  /** Serve Streamable HTTP with these options instead of stdio. */
  http?: Omit<HttpOptions, "createServer" | "log">;
  stdin: Readable;
  stdout: Writable;
  version: string;
  log: (line: string) => void;
}

export async function serveMcp(o: ServeOptions): Promise<void> {
  const { limits, namespace } = o.backend;
  const backend = new KruntimesBackend(o.backend);
  const createServer = () => createMcpServer({ backend, limits, version: o.version, log: o.log });
  void backend.probeGateway().then(
    (via) => o.log(`gateway reached (${via})`),
    (e) => {
      const err = CliError.from(e);
      o.log(`gateway not reachable yet (session tools and invoke_function need it): ${err.message}`);
      if (err.hint) o.log(`hint: ${err.hint}`);
    },
  );

  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  process.once("SIGINT", finish);
  process.once("SIGTERM", finish);
  try {
    if (o.http) {
      const server = serveHttp({ ...o.http, createServer, log: o.log });
      o.log(`serving MCP (Streamable HTTP) at ${server.url} for namespace "${namespace}"`);
      await done;
      await server.stop();
    } else {
      const transport = new StdioServerTransport(o.stdin, o.stdout);
      transport.onclose = finish;
      o.stdin.once("end", finish);
      o.stdin.once("close", finish);
      const server = createServer();
      await server.connect(transport);
      o.log(`serving MCP on stdio for namespace "${namespace}"`);
      await done;
      await server.close().catch(() => {});
    }
  } finally {
    process.off("SIGINT", finish);
    process.off("SIGTERM", finish);
    backend.close();
    // Calls still waiting (a watch, a long exec) have no one to answer: do not wait for them.
    setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  }
}
