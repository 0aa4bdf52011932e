import { describe, expect, test } from "bun:test";
import { OptionsError, parseBytes, parseOptions } from "./options.ts";

describe("gateway options", () => {
  test("defaults are the documented ones", () => {
    const o = parseOptions([], {});
    expect([...o.protocols]).toEqual(["http", "https"]);
    expect([o.httpPort, o.grpcPort, o.httpsPort, o.metricsPort]).toEqual([8080, 8081, 8443, 9090]);
    expect(o.maxConcurrentRequests).toBe(1024);
    expect(o.maxRequestBytes).toBe(16 * 1024 * 1024);
    expect([o.defaultTimeoutMs, o.maxTimeoutMs]).toEqual([30_000, 900_000]);
    expect([o.authCacheTtlMs, o.authDenyTtlMs, o.authCacheSize]).toEqual([60_000, 5_000, 10_000]);
    expect(o.dataplaneTokenFile).toBe("/var/run/secrets/kruntimes.io/dataplane/token");
    expect(o.namespace).toBeUndefined();
  });

  test("flags win over KRT_ env, both forms of flag", () => {
    const o = parseOptions(["--http-port", "9000", "--protocols=https"], {
      KRT_HTTP_PORT: "7000",
      KRT_NAMESPACE: "team",
    });
    expect(o.httpPort).toBe(9000);
    expect([...o.protocols]).toEqual(["https"]);
    expect(o.namespace).toBe("team");
  });

  test("byte quantities", () => {
    expect(parseBytes("1048576")).toBe(1048576);
    expect(parseBytes("512Ki")).toBe(512 * 1024);
    expect(parseBytes("1G")).toBe(1e9);
    expect(() => parseBytes("16MB")).toThrow();
  });

  test.each([
    [["--protocols=ftp"], "--protocols"],
    [["--protocols="], "--protocols"],
    [["--bogus=1"], "unknown flag"],
    [["--max-concurrent-requests=0"], "at least 1"],
    [["--default-timeout=20m"], "--max-timeout"],
    [["--auth-deny-ttl=2m"], "--auth-deny-ttl"],
    [["--max-request-bytes=lots"], "--max-request-bytes"],
  ])("%p is refused", (argv, msg) => {
    expect(() => parseOptions(argv, {})).toThrow(OptionsError);
    expect(() => parseOptions(argv, {})).toThrow(msg);
  });
});
