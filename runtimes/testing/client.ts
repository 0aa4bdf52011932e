/**
 * A Connect client of one Runtime Server over its Unix socket: connect-web's transport on Bun's
 * fetch, which takes `unix:` (DESIGN.md: faster than connect-node's HTTP/1.1 client). Used by the
 * conformance suite and the benchmark, as runtimed would call the server.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { FunctionService } from "../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { RuntimeService } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { TaskService } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";

export interface RuntimeClients {
  runtime: Client<typeof RuntimeService>;
  task: Client<typeof TaskService>;
  functions: Client<typeof FunctionService>;
}

/** `binary`: protobuf on the wire, as runtimed sends it (default JSON, readable in failures). */
export function connectUnix(socketPath: string, options: { binary?: boolean } = {}): RuntimeClients {
  const transport = createConnectTransport({
    baseUrl: "http://runtime-server",
    useBinaryFormat: options.binary ?? false,
    fetch: ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      // timeout: false — Bun's fetch otherwise drops a response that stays silent for 300 s,
      // and an Execute stream of a quiet Run is exactly that.
      fetch(input, { ...init, unix: socketPath, timeout: false } as RequestInit)) as typeof fetch,
  });
  return {
    runtime: createClient(RuntimeService, transport),
    task: createClient(TaskService, transport),
    functions: createClient(FunctionService, transport),
  };
}
