/**
 * One call of `kruntimes.gateway.v1.FunctionService.Invoke` with the Connect protocol (binary) on
 * Bun `fetch`, whose `tls` option carries the CA and the expected server name.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { FunctionService, type InvokeResponse } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import type { GatewayTarget } from "./locate.ts";

export interface InvokeCall {
  namespace: string;
  run: string;
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
  token: string;
  timeoutMs?: number;
}

export async function invokeFunction(target: GatewayTarget, call: InvokeCall): Promise<InvokeResponse> {
  const tls = target.tls;
  const transport = createConnectTransport({
    baseUrl: target.baseUrl,
    useBinaryFormat: true,
    fetch: ((input: string | URL | Request, init?: RequestInit) =>
      fetch(input, { ...init, tls } as RequestInit)) as typeof fetch,
  });
  const client = createClient(FunctionService, transport);
  return client.invoke(
    {
      namespace: call.namespace,
      run: call.run,
      body: call.body,
      contentType: call.contentType,
      headers: call.headers,
    },
    {
      headers: { authorization: `Bearer ${call.token}` },
      ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
    },
  );
}
