/**
 * The cheapest correct Connect unary client: one `fetch` with a binary protobuf body and
 * `content-type: application/proto`, the answer decoded only as far as the benchmark checks it.
 * It keeps the load generator's own cost (on the same 2 cores) as low as the plain HTTP floor's,
 * so the servers, not the client library, are what the numbers compare. Errors: non-200 throws
 * with the Connect error JSON.
 */
export interface RawTarget {
  url: string;
  unix?: string;
  headers: Record<string, string>;
}

export async function rawUnary(t: RawTarget, body: Uint8Array): Promise<Uint8Array> {
  const res = await fetch(t.url, {
    method: "POST",
    body,
    headers: { "content-type": "application/proto", "connect-protocol-version": "1", ...t.headers },
    ...(t.unix ? { unix: t.unix } : {}),
    timeout: false,
  } as RequestInit);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200)
    throw new Error(`HTTP ${res.status}: ${new TextDecoder().decode(bytes).slice(0, 200)}`);
  return bytes;
}
