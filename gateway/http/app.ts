/**
 * The gateway's HTTP surface (Elysia on Bun.serve, HTTP/1.1): the Connect routes of every RPC
 * (Connect JSON/binary and gRPC-Web), the plain invoke route, /openapi.json and /v1/protoset.
 * Elysia's lifecycle hooks carry what belongs to HTTP (the request-size check before the body is
 * read); auth, limits and routing live in the Invoker so the node:http2 listeners share them.
 */
import { Elysia } from "elysia";
import type { FetchHandler } from "../connect/router.ts";
import { ErrorReason, GatewayError } from "../errors.ts";
import type { Invoker } from "../invoke/invoker.ts";
import { FILES_PATH, FILES_ROOT_PATH, getFile, putFile } from "../session/file-routes.ts";
import { sessionOpenApiPaths } from "../session/openapi.ts";
import { RAW_STREAM_PATHS, rawStreamHandler } from "../session/raw-stream.ts";
import type { SessionGateway } from "../session/session-gateway.ts";
import { INVOKE_PATH, plainInvoke } from "./invoke-route.ts";
import { OPENAPI_PATH, openApiDocument } from "./openapi.ts";
import { PROTOSET_PATH, protoset } from "./protoset.ts";

export interface AppDeps {
  invoker: Invoker;
  rpc: Map<string, FetchHandler>;
  maxRequestBytes: number;
  version: string;
  /** Session Runs: the plain file routes. */
  sessions?: SessionGateway;
}

export function createApp(d: AppDeps) {
  const doc = openApiDocument(d.version);
  const openapi = JSON.stringify(
    d.sessions ? { ...doc, paths: { ...doc.paths, ...sessionOpenApiPaths() } } : doc,
  );
  const schema = protoset();
  const rpc = new Elysia({ name: "connect-rpc" });
  for (const [path, handle] of d.rpc) {
    const method = d.sessions ? RAW_STREAM_PATHS[path] : undefined;
    const h = d.sessions && method ? rawStreamHandler(d.sessions, method, handle) : handle;
    rpc.post(path, ({ request }) => h(request), { parse: "none" });
  }
  const files = new Elysia({ name: "session-files" });
  const sessions = d.sessions;
  if (sessions) {
    for (const path of [FILES_PATH, FILES_ROOT_PATH]) {
      files.get(path, ({ request }) => getFile(sessions, request));
      files.put(path, ({ request }) => putFile(sessions, request), { parse: "none" });
    }
  }
  return new Elysia()
    .use(rpc)
    .use(files)
    .post(INVOKE_PATH, ({ request, params }) => plainInvoke(d.invoker, request, params, d.maxRequestBytes), {
      parse: "none",
    })
    .get(OPENAPI_PATH, () => new Response(openapi, { headers: { "content-type": "application/json" } }))
    .get(
      PROTOSET_PATH,
      () => new Response(schema, { headers: { "content-type": "application/octet-stream" } }),
    )
    .onError(({ code, error }) => {
      if (code === "NOT_FOUND") {
        return new GatewayError(ErrorReason.NotFound, "no such route (see /openapi.json)").toResponse();
      }
      return GatewayError.from(error).toResponse();
    });
}
