/**
 * krt's side of the gateway contract: `invokeFunction` against a stand-in FunctionService over
 * strict TLS (the CA, the expected server name while dialling an IP), the bearer token, and every
 * gateway error class mapped to its exit code and message by `invokeError`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { makeTestPki, type TestPki } from "../../gateway/testing/tls.ts";
import { ExitCode } from "../exit-codes.ts";
import { invokeFunction } from "./invoke-client.ts";
import { invokeError } from "./invoke-errors.ts";
import type { GatewayTarget } from "./locate.ts";
import { type StandinGateway, startStandinGateway } from "./testing/standin-gateway.ts";

const TOKEN = "test-token";
let pki: TestPki;
let gw: StandinGateway;
let ca: string;

beforeAll(() => {
  pki = makeTestPki({ dns: ["kruntimes-gateway.kruntimes.svc"], ips: [] });
  ca = readFileSync(pki.caFile, "utf8");
  gw = startStandinGateway({
    hostname: "127.0.0.1",
    cert: readFileSync(pki.certFile, "utf8"),
    key: readFileSync(pki.keyFile, "utf8"),
    token: TOKEN,
  });
});
afterAll(() => gw?.stop());

/** Dial the IP, verify the certificate for the Service's DNS name: how discovery connects. */
const target = (tls: GatewayTarget["tls"] = { ca, serverName: "kruntimes-gateway.kruntimes.svc" }) =>
  ({ baseUrl: gw.url, tls, via: "direct 127.0.0.1", close() {} }) satisfies GatewayTarget;

const call = (run: string, extra: Partial<Parameters<typeof invokeFunction>[1]> = {}) =>
  invokeFunction(target(), {
    namespace: "team",
    run,
    body: new TextEncoder().encode('{"x":1}'),
    contentType: "application/json",
    headers: { "x-trace": "abc" },
    token: TOKEN,
    ...extra,
  });

async function failure(run: string, extra: Partial<Parameters<typeof invokeFunction>[1]> = {}) {
  try {
    await call(run, extra);
  } catch (e) {
    return invokeError(e, { namespace: "team", run, via: "direct 127.0.0.1" });
  }
  throw new Error(`invoking ${run} did not fail`);
}

describe("krt invoke against the gateway contract", () => {
  test("body, content type and headers go through; the response comes back as sent", async () => {
    const res = await call("echo");
    expect(new TextDecoder().decode(res.body)).toBe('{"x":1}');
    expect(res.contentType).toBe("application/json");
    expect(res.headers).toEqual({ "x-trace": "abc", "x-namespace": "team" });
    expect(res.invocationId).toBe("inv-1");
    expect(res.status).toBe(200);
  });

  test("TLS is strict: the certificate must be signed by the CA and valid for the server name", async () => {
    await expect(
      invokeFunction(target({ ca, serverName: "other.kruntimes.svc" }), {
        namespace: "team",
        run: "echo",
        body: new Uint8Array(),
        contentType: "",
        headers: {},
        token: TOKEN,
      }),
    ).rejects.toThrow(/ALTNAME|altname|hostname/i);
    await expect(
      invokeFunction(target({ serverName: "kruntimes-gateway.kruntimes.svc" }), {
        namespace: "team",
        run: "echo",
        body: new Uint8Array(),
        contentType: "",
        headers: {},
        token: TOKEN,
      }),
    ).rejects.toThrow(/certificate|verify|self.signed/i);
    const insecure = await invokeFunction(target({ rejectUnauthorized: false }), {
      namespace: "team",
      run: "echo",
      body: new Uint8Array(),
      contentType: "",
      headers: {},
      token: TOKEN,
    });
    expect(insecure.status).toBe(200);
  });

  test.each([
    ["a wrong token", "echo", { token: "nope" }, ExitCode.Forbidden, /refused the token/],
    ["permission denied", "denied", {}, ExitCode.Forbidden, /create runs.kruntimes.io\/invoke "denied"/],
    ["no such Run", "missing", {}, ExitCode.NotFound, /run "missing" in namespace "team" not found/],
    ["not Ready", "pending", {}, ExitCode.NotReady, /phase Pending, mode function/],
    ["not a function", "task", {}, ExitCode.NotReady, /mode task/],
    ["request too large", "huge", {}, ExitCode.TooLarge, /request too large/],
    ["function busy", "busy", {}, ExitCode.Busy, /the function is busy \(retry after 2s\)/],
    ["pod unreachable", "gone", {}, ExitCode.FunctionUnavailable, /could not serve .*retry after 1s/],
    ["deadline", "slow", {}, ExitCode.DeadlineExceeded, /did not finish in time/],
  ] as const)("%s → its exit code and a hint", async (_what, run, extra, code, message) => {
    const err = await failure(run, extra);
    expect(err.exitCode).toBe(code);
    expect(err.message).toMatch(message);
    expect(err.hint ?? "").not.toBe("");
  });

  test("a handler error carries its type, message, traceback and invocation ID", async () => {
    const err = await failure("boom");
    expect(err.exitCode).toBe(ExitCode.HandlerError);
    expect(err.message).toContain("handler error: ValueError: bad input");
    expect(err.message).toContain("invocation: inv-2");
    expect(err.message).toContain('File "handler.py", line 2');
    expect(err.hint).toContain("stays Ready");
  });

  test("a gateway that cannot be reached is Unavailable (69), not a 503 from the gateway", async () => {
    const closed = { baseUrl: "https://127.0.0.1:1", tls: { ca }, via: "direct 127.0.0.1", close() {} };
    try {
      await invokeFunction(closed, {
        namespace: "team",
        run: "echo",
        body: new Uint8Array(),
        contentType: "",
        headers: {},
        token: TOKEN,
      });
      throw new Error("did not fail");
    } catch (e) {
      const err = invokeError(e, { namespace: "team", run: "echo", via: "direct 127.0.0.1" });
      expect(err.exitCode).toBe(ExitCode.Unavailable);
      expect(err.message).toContain("cannot reach the gateway (direct 127.0.0.1)");
    }
  });
});
