/** The Connect client pieces the cluster tests use, re-exported from the gateway's dependencies. */
export { Code, ConnectError, createClient } from "@connectrpc/connect";
export { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
