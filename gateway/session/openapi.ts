/** The session file routes in the gateway's OpenAPI document (merged into /openapi.json). */
import { PUT_CHUNK_BYTES } from "./file-routes.ts";

const params = [
  { name: "namespace", in: "path", required: true, schema: { type: "string" } },
  { name: "name", in: "path", required: true, schema: { type: "string" }, description: "session Run" },
  {
    name: "path",
    in: "path",
    required: true,
    schema: { type: "string" },
    description:
      "Path relative to the session's workspace, may contain '/' (percent-encode other reserved characters); confined to the workspace",
  },
];
const error = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});
const errors = {
  "400": error("bad path, query or page token"),
  "401": error("no or bad token"),
  "403": error("not allowed (create runs/session), or a path outside the workspace"),
  "404": error("no such Run, or no such path"),
  "409": error("the Run is not a Ready session (RunNotReady detail), or the file exists (mode=create)"),
  "429": {
    ...error("the session's operation queue is full, or the gateway is busy"),
    headers: { "Retry-After": { schema: { type: "integer" } } },
  },
  "503": {
    ...error("the session's pod cannot be reached"),
    headers: { "Retry-After": { schema: { type: "integer" } } },
  },
  "504": error("the deadline passed"),
};
const fileInfo = {
  type: "object",
  properties: {
    path: { type: "string" },
    name: { type: "string" },
    type: {
      type: "string",
      enum: ["FILE_TYPE_FILE", "FILE_TYPE_DIRECTORY", "FILE_TYPE_SYMLINK", "FILE_TYPE_OTHER"],
    },
    size: { type: "string", description: "bytes (protobuf JSON uint64)" },
    mode: { type: "integer" },
    modifiedMicros: { type: "string" },
    linkTarget: { type: "string" },
  },
};

export function sessionOpenApiPaths() {
  return {
    "/v1/namespaces/{namespace}/runs/{name}/files/{path}": {
      get: {
        operationId: "getSessionFile",
        summary:
          "Download a file of a session's workspace (streamed), or list a directory one page at a time",
        parameters: [
          ...params,
          { name: "offset", in: "query", schema: { type: "integer" }, description: "file: first byte" },
          {
            name: "length",
            in: "query",
            schema: { type: "integer" },
            description: "file: bytes (0 = to the end)",
          },
          {
            name: "limit",
            in: "query",
            schema: { type: "integer" },
            description: "directory: entries per page (default 100, at most 1000)",
          },
          {
            name: "page_token",
            in: "query",
            schema: { type: "string" },
            description: "directory: nextPageToken of the previous page",
          },
        ],
        responses: {
          "200": {
            description:
              "The file's bytes as they are read; or, for a directory, one page of its entries ordered by the UTF-8 bytes of their names",
            headers: {
              "x-kruntimes-file-size": { schema: { type: "integer" } },
              "last-modified": { schema: { type: "string" } },
            },
            content: {
              "application/octet-stream": { schema: { type: "string", format: "binary" } },
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    path: { type: "string" },
                    entries: { type: "array", items: fileInfo },
                    nextPageToken: { type: "string", description: "absent on the last page" },
                  },
                },
              },
            },
          },
          ...errors,
        },
      },
      put: {
        operationId: "putSessionFile",
        summary: `Upload a file into a session's workspace: the body is streamed as WriteFile chunks of ${PUT_CHUNK_BYTES} bytes sharing one upload; the last chunk commits it atomically`,
        parameters: [
          ...params,
          {
            name: "mode",
            in: "query",
            schema: { type: "string", enum: ["create", "truncate", "append"], default: "truncate" },
          },
          {
            name: "parents",
            in: "query",
            schema: { type: "boolean", default: false },
            description: "create missing parent directories",
          },
          {
            name: "file_mode",
            in: "query",
            schema: { type: "string", default: "644" },
            description: "permission bits of a new file, octal",
          },
        ],
        requestBody: { content: { "*/*": { schema: { type: "string", format: "binary" } } } },
        responses: {
          "201": {
            description: "Committed",
            content: {
              "application/json": {
                schema: { type: "object", properties: { received: { type: "string" }, info: fileInfo } },
              },
            },
          },
          ...errors,
        },
      },
    },
  };
}
