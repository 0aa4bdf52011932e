/**
 * Which request headers reach the handler and which handler headers reach the caller: lower-cased,
 * without hop-by-hop headers, credentials or the protocols' own framing headers.
 */
const DROP_REQUEST = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "content-type",
  "accept-encoding",
  "expect",
]);

const DROP_PREFIXES = ["connect-", "grpc-", ":"];

const DROP_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "content-encoding",
  "content-type",
  "trailer",
]);

/** Headers for the handler, from the caller's request. */
export function handlerHeaders(headers: Headers | Iterable<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of headers) {
    const name = k.toLowerCase();
    if (DROP_REQUEST.has(name) || DROP_PREFIXES.some((p) => name.startsWith(p))) continue;
    out[name] = v;
  }
  return out;
}

/** Headers for the plain route's response, from the handler's. */
export function responseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (DROP_RESPONSE.has(name) || DROP_PREFIXES.some((p) => name.startsWith(p))) continue;
    out[name] = v;
  }
  return out;
}
