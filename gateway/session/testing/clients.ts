/** The Connect client pieces the session cluster tests use, re-exported from the gateway's dependencies. */
export { Code, ConnectError, createClient } from "@connectrpc/connect";
export { createGrpcTransport } from "@connectrpc/connect-node";
export { createConnectTransport } from "@connectrpc/connect-web";
export { default as pino } from "pino";
