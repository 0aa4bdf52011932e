import { describe, expect, test } from "bun:test";
import { OptionsError, parseOptions } from "./options.ts";

const env = {
  POD_NAME: "p",
  POD_NAMESPACE: "ns",
  POD_UID: "uid",
  POD_IP: "127.1.0.5",
  KRT_RUNTIME: "bash",
  KRT_CAPACITY: '{"runs":3}',
  KRT_PORT: "8081",
};

describe("parseOptions", () => {
  test("reads the pod template's env, with defaults", () => {
    const o = parseOptions([], env);
    expect(o).toMatchObject({
      pod: { name: "p", namespace: "ns", uid: "uid", ip: "127.1.0.5" },
      runtime: "bash",
      capacity: { runs: 3 },
      socketPath: "/var/run/kruntimes/runtime.sock",
      host: "127.1.0.5",
      port: 8081,
      leaseDurationSeconds: 10,
      heartbeatIntervalMs: 2000,
      runningDelayMs: 500,
    });
  });
  test("the dataplane: port, allowed subjects, audience and cache bounds", () => {
    const d = parseOptions([], env).dataplane;
    expect(d).toEqual({
      port: 8444,
      subjects: [],
      audience: "kruntimes-dataplane",
      allowTtlMs: 60_000,
      denyTtlMs: 5000,
      cacheSize: 1024,
    });
    const o = parseOptions([], {
      ...env,
      KRT_DATAPLANE_PORT: "9444",
      KRT_DATAPLANE_SUBJECTS: "system:serviceaccount:k:gw, system:serviceaccount:k:other,",
    });
    expect(o.dataplane.port).toBe(9444);
    expect(o.dataplane.subjects).toEqual(["system:serviceaccount:k:gw", "system:serviceaccount:k:other"]);
  });
  test("flags win over env", () => {
    const o = parseOptions(["--port=9000", "--socket", "/tmp/s.sock"], env);
    expect(o.port).toBe(9000);
    expect(o.socketPath).toBe("/tmp/s.sock");
  });
  test("missing identity, bad numbers and unknown flags say what to do", () => {
    expect(() => parseOptions([], { ...env, POD_UID: undefined })).toThrow(
      /pod-uid \(or \$POD_UID\) is required/,
    );
    expect(() => parseOptions(["--port=x"], env)).toThrow(/--port must be an integer/);
    expect(() => parseOptions(["--nope"], env)).toThrow(OptionsError);
    expect(() => parseOptions([], { ...env, KRT_CAPACITY: "[1]" })).toThrow(/JSON object/);
  });
});
