/**
 * OpenAPI 3.1 description of the gateway's plain HTTP surface, served at GET /openapi.json: the
 * plain invoke route and the Connect JSON form of FunctionService.Invoke. Kept beside the routes;
 * a unit test checks that every documented path is one the app serves.
 */
import { ERROR_TABLE } from "../errors.ts";
import { INVOCATION_ID_HEADER } from "./invoke-route.ts";

export const OPENAPI_PATH = "/openapi.json";

const errorSchema = {
  type: "object",
  required: ["code", "reason", "message"],
  properties: {
    code: { type: "string", description: "Connect code, e.g. failed_precondition" },
    reason: { type: "string", description: "Failure reason (REASON_*) or the gateway's reason" },
    message: { type: "string", description: "What happened and what to do next" },
    retryAfterSeconds: { type: "integer" },
    runNotReady: {
      type: "object",
      properties: { phase: { type: "string" }, mode: { type: "string" } },
    },
    handlerError: {
      type: "object",
      properties: {
        type: { type: "string" },
        message: { type: "string" },
        traceback: { type: "string" },
        exitCode: { type: "integer" },
        invocationId: { type: "string" },
      },
    },
  },
} as const;

function errorResponses() {
  const out: Record<string, unknown> = {};
  for (const [reason, row] of Object.entries(ERROR_TABLE)) {
    const key = String(row.http);
    const prev = out[key] as { description: string } | undefined;
    out[key] = {
      description: prev ? `${prev.description}; ${reason}` : reason,
      headers: row.retryAfter ? { "Retry-After": { schema: { type: "integer" } } } : undefined,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return out;
}

export function openApiDocument(version: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "kruntimes gateway",
      version,
      description:
        "Call function Runs. Authenticate with a Kubernetes bearer token; calling a Run needs `create` on `runs/invoke` of that Run. The same call is served as kruntimes.gateway.v1.FunctionService/Invoke over Connect (JSON and binary), gRPC and gRPC-Web.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths: {
      "/v1/namespaces/{namespace}/runs/{name}/invoke": {
        post: {
          operationId: "invoke",
          summary: "Invoke a Ready function Run; the body goes to the handler as-is",
          parameters: [
            { name: "namespace", in: "path", required: true, schema: { type: "string" } },
            { name: "name", in: "path", required: true, schema: { type: "string" } },
            {
              name: "Connect-Timeout-Ms",
              in: "header",
              required: false,
              schema: { type: "integer" },
              description: "Deadline of the call, ms (default --default-timeout)",
            },
          ],
          requestBody: { content: { "*/*": { schema: { type: "string", format: "binary" } } } },
          responses: {
            default: {
              description: "The handler's own status, content type, headers and body",
              headers: { [INVOCATION_ID_HEADER]: { schema: { type: "string" } } },
              content: { "*/*": { schema: { type: "string", format: "binary" } } },
            },
            ...errorResponses(),
          },
        },
      },
      "/kruntimes.gateway.v1.FunctionService/Invoke": {
        post: {
          operationId: "connectInvoke",
          summary: "FunctionService.Invoke with the Connect protocol, JSON form",
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["namespace", "run"],
                  properties: {
                    namespace: { type: "string" },
                    run: { type: "string" },
                    body: { type: "string", contentEncoding: "base64" },
                    contentType: { type: "string" },
                    headers: { type: "object", additionalProperties: { type: "string" } },
                  },
                },
              },
            },
          },
          responses: {
            "200": {
              description: "The handler's answer",
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: {
                      status: { type: "integer" },
                      contentType: { type: "string" },
                      body: { type: "string", contentEncoding: "base64" },
                      headers: { type: "object", additionalProperties: { type: "string" } },
                      invocationId: { type: "string" },
                      durationMicros: { type: "integer" },
                    },
                  },
                },
              },
            },
            default: { description: "A Connect error: {code, message, details}" },
          },
        },
      },
    },
  };
}
