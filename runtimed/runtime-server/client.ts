/**
 * Connect clients for the local Runtime Server on its Unix socket: connect-web's transport over
 * Bun's fetch with `unix:` (2–3x faster than connect-node's HTTP/1.1 client on Bun, see
 * DESIGN.md), binary protobuf on the wire. `timeout: false`: Bun's fetch otherwise aborts a
 * response that stays silent for 300 s, and an Execute stream of a quiet Run longer than that
 * would be lost mid-attempt (deadlines are the Run's own timeout, enforced by the server).
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import { RuntimeService } from "@kruntimes/api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { SessionService } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { TaskService } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";

export interface RuntimeServerClients {
  tasks: Client<typeof TaskService>;
  runtime: Client<typeof RuntimeService>;
  functions: Client<typeof FunctionService>;
  sessions: Client<typeof SessionService>;
}

/** Bun's fetch over the Unix socket, with no idle timeout on the response. */
export function unixFetch(socketPath: string): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) =>
    fetch(input, { ...init, unix: socketPath, timeout: false } as RequestInit)) as typeof fetch;
}

export function runtimeServerClients(socketPath: string): RuntimeServerClients {
  const transport = createConnectTransport({
    baseUrl: "http://runtime-server",
    useBinaryFormat: true,
    fetch: unixFetch(socketPath),
  });
  return {
    tasks: createClient(TaskService, transport),
    runtime: createClient(RuntimeService, transport),
    functions: createClient(FunctionService, transport),
    sessions: createClient(SessionService, transport),
  };
}
