/**
 * Plain HTTP file routes of session Runs, so curl works:
 *
 * - `GET /v1/namespaces/{ns}/runs/{name}/files/{path}`: a file is streamed as it is read
 *   (ReadFile chunks, `application/octet-stream`, headers `x-kruntimes-file-size`,
 *   `last-modified`; `?offset=&length=` for a range); a directory answers one JSON page of its
 *   listing `{path, entries, nextPageToken}` (`?limit=&page_token=`, ListFiles paging); a missing
 *   path is 404.
 * - `PUT /v1/namespaces/{ns}/runs/{name}/files/{path}`: the request body is streamed into
 *   WriteFile calls of at most PUT_CHUNK_BYTES sharing one upload_id; the last one commits the file
 *   atomically. `?mode=create|truncate|append` (default truncate), `?parents=true`,
 *   `?file_mode=0755`. Answers 201 with the committed file's info as JSON.
 *
 * Errors are JSON `{code, reason, message}` with the gateway's table status (or the HTTP status of
 * runtimed's Connect code: 404 missing, 403 outside the workspace, 409 exists, 429 busy).
 */
import { toJson } from "@bufbuild/protobuf";
import {
  ListFilesResponseSchema,
  type ReadFileResponse,
  WriteFileResponseSchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { FileType, WriteMode } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { ErrorReason, GatewayError } from "../errors.ts";
import { requestedTimeoutMs } from "../limits/deadline.ts";
import { sessionErrorResponse } from "./session-errors.ts";
import type { SessionCallContext, SessionGateway } from "./session-gateway.ts";

export const FILES_PATH = "/v1/namespaces/:namespace/runs/:name/files/*";
export const FILES_ROOT_PATH = "/v1/namespaces/:namespace/runs/:name/files";
/** Size of each WriteFile chunk a PUT body is cut into (at most --max-request-bytes). */
export const PUT_CHUNK_BYTES = 1024 * 1024;

const PREFIX = /^\/v1\/namespaces\/([^/]+)\/runs\/([^/]+)\/files(?:\/(.*))?$/;
const WRITE_MODES: Record<string, WriteMode> = {
  create: WriteMode.CREATE,
  truncate: WriteMode.TRUNCATE,
  append: WriteMode.APPEND,
};

interface Parsed {
  target: { namespace: string; run: string };
  path: string;
  query: URLSearchParams;
  ctx: SessionCallContext;
}

function parse(request: Request): Parsed {
  const url = new URL(request.url);
  const m = PREFIX.exec(url.pathname);
  if (!m) throw new GatewayError(ErrorReason.NotFound, "no such route (see /openapi.json)");
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new GatewayError(ErrorReason.InvalidArgument, `bad percent-encoding in "${s}"`);
    }
  };
  const path = (m[3] ?? "").split("/").map(decode).join("/").replace(/\/+$/, "");
  return {
    target: { namespace: decode(m[1] as string), run: decode(m[2] as string) },
    path,
    query: url.searchParams,
    ctx: {
      authorization: request.headers.get("authorization"),
      requestedTimeoutMs: requestedTimeoutMs(request.headers),
      protocol: "http",
      signal: request.signal,
    },
  };
}

function integer(q: URLSearchParams, name: string, radix = 10): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number.parseInt(v, radix);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n))
    throw new GatewayError(ErrorReason.InvalidArgument, `?${name}=${v} is not a non-negative integer`);
  return n;
}

export async function getFile(gw: SessionGateway, request: Request): Promise<Response> {
  try {
    const p = parse(request);
    const stat = await gw.unary("stat", { target: p.target, path: p.path }, p.ctx);
    if (stat.info?.type === FileType.DIRECTORY) {
      const page = await gw.unary(
        "listFiles",
        {
          target: p.target,
          path: p.path,
          limit: integer(p.query, "limit") ?? 0,
          pageToken: p.query.get("page_token") ?? "",
        },
        p.ctx,
      );
      return Response.json({ path: p.path, ...(toJson(ListFilesResponseSchema, page) as object) });
    }
    const chunks = gw.stream(
      "readFile",
      {
        target: p.target,
        path: p.path,
        offset: BigInt(integer(p.query, "offset") ?? 0),
        length: BigInt(integer(p.query, "length") ?? 0),
      },
      p.ctx,
    );
    // The first chunk (it carries the file's info) before the status, so a refusal is still an error status.
    const first = await chunks.next();
    const headers: Record<string, string> = { "content-type": "application/octet-stream" };
    const info = first.done ? stat.info : ((first.value as ReadFileResponse).info ?? stat.info);
    if (info) {
      headers["x-kruntimes-file-size"] = String(info.size);
      if (info.modifiedMicros)
        headers["last-modified"] = new Date(Number(info.modifiedMicros / 1000n)).toUTCString();
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!first.done) {
          const data = (first.value as ReadFileResponse).data;
          if (data.byteLength > 0) controller.enqueue(data);
        } else controller.close();
      },
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) controller.close();
          else if ((next.value as ReadFileResponse).data.byteLength > 0)
            controller.enqueue((next.value as ReadFileResponse).data);
        } catch (e) {
          controller.error(e);
        }
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    return new Response(first.done ? null : body, { status: 200, headers });
  } catch (e) {
    return sessionErrorResponse(e);
  }
}

export async function putFile(gw: SessionGateway, request: Request): Promise<Response> {
  try {
    const p = parse(request);
    if (p.path === "")
      throw new GatewayError(ErrorReason.InvalidArgument, "PUT needs a file path after /files/");
    const modeName = p.query.get("mode") ?? "truncate";
    const mode = WRITE_MODES[modeName];
    if (mode === undefined)
      throw new GatewayError(
        ErrorReason.InvalidArgument,
        `?mode=${modeName}: use create, truncate or append`,
      );
    const parents = p.query.get("parents") === "true";
    const fileMode = integer(p.query, "file_mode", 8) ?? 0;
    const uploadId = `put-${Bun.randomUUIDv7()}`;
    let offset = 0;
    const send = (data: Uint8Array, last: boolean) =>
      gw.unary(
        "writeFile",
        {
          target: p.target,
          path: p.path,
          uploadId,
          offset: BigInt(offset),
          data,
          mode,
          fileMode,
          last,
          parents,
        },
        p.ctx,
      );
    // Cut the body into chunks of PUT_CHUNK_BYTES; a full chunk is sent once more data follows,
    // so the last call (last = true) always carries data when the body has any.
    const size = Math.min(PUT_CHUNK_BYTES, gw.maxChunkBytes);
    let pending = new Uint8Array(size);
    let filled = 0;
    if (request.body) {
      for await (const piece of request.body as unknown as AsyncIterable<Uint8Array>) {
        let at = 0;
        while (at < piece.byteLength) {
          if (filled === size) {
            await send(pending, false);
            offset += filled;
            pending = new Uint8Array(size);
            filled = 0;
          }
          const n = Math.min(piece.byteLength - at, size - filled);
          pending.set(piece.subarray(at, at + n), filled);
          filled += n;
          at += n;
        }
      }
    }
    const res = await send(pending.subarray(0, filled), true);
    return Response.json(toJson(WriteFileResponseSchema, res), { status: 201 });
  } catch (e) {
    return sessionErrorResponse(e);
  }
}
