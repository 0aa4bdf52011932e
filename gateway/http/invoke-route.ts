/**
 * The plain HTTP route for people and webhooks: `POST /v1/namespaces/{namespace}/runs/{name}/invoke`.
 * The request body goes to the handler as-is with its content type; the handler's status, content
 * type, headers and body come back as-is (plus `x-kruntimes-invocation-id`). Errors are JSON
 * (`{code, reason, message, …}`) with the error table's HTTP status and Retry-After.
 */
import { ErrorReason, GATEWAY_BODY_LIMIT_NEXT, GatewayError } from "../errors.ts";
import { handlerHeaders, responseHeaders } from "../invoke/forward-headers.ts";
import type { Invoker } from "../invoke/invoker.ts";
import { requestedTimeoutMs } from "../limits/deadline.ts";

export const INVOKE_PATH = "/v1/namespaces/:namespace/runs/:name/invoke";
export const INVOCATION_ID_HEADER = "x-kruntimes-invocation-id";

export async function plainInvoke(
  invoker: Invoker,
  request: Request,
  params: { namespace: string; name: string },
  maxRequestBytes: number,
): Promise<Response> {
  try {
    const length = Number(request.headers.get("content-length") ?? "0");
    if (length > maxRequestBytes) {
      throw new GatewayError(
        ErrorReason.RequestTooLarge,
        `the body has ${length} bytes; this gateway accepts at most ${maxRequestBytes}`,
        { next: GATEWAY_BODY_LIMIT_NEXT },
      );
    }
    const body = new Uint8Array(await request.arrayBuffer());
    const out = await invoker.invoke({
      namespace: decodeURIComponent(params.namespace),
      run: decodeURIComponent(params.name),
      body,
      contentType: request.headers.get("content-type") ?? "",
      headers: handlerHeaders(request.headers),
      authorization: request.headers.get("authorization"),
      requestedTimeoutMs: requestedTimeoutMs(request.headers),
      protocol: "http",
      signal: request.signal,
    });
    const headers = responseHeaders(out.headers);
    headers["content-type"] = out.contentType || "application/octet-stream";
    headers[INVOCATION_ID_HEADER] = out.invocationId;
    return new Response(out.body, { status: out.status, headers });
  } catch (e) {
    return GatewayError.from(e).toResponse();
  }
}
