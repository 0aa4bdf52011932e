import { describe, expect, test } from "bun:test";
import { helpText, OptionsError, parseOptions } from "./options.ts";

describe("parseOptions", () => {
  test("defaults", () => {
    const o = parseOptions([], {});
    expect(o.metricsPort).toBe(8080);
    expect(o.leaderElect).toBe(true);
    expect(o.leaseDurationMs).toBe(4000);
    expect([o.renewDeadlineMs, o.retryPeriodMs]).toEqual([3000, 1000]);
    expect(o.staleAfterMs).toBe(15_000);
    expect(o.runtimedImage).toMatch(/^ghcr\.io\/kruntimes\/runtimed:\d+\.\d+\.\d+$/);
    expect(o.leaseNamespace).toBe("kruntimes-system");
    expect(o.namespace).toBeUndefined();
  });

  test("dataplane flags: port, subjects, NetworkPolicy and the gateway's pods", () => {
    const d = parseOptions([], {});
    expect(d.dataplanePort).toBe(8444);
    expect(d.dataplaneSubjects).toEqual([]);
    expect(d.dataplaneNetworkPolicy).toBe(false);
    expect(d.gatewayNamespace).toBeUndefined();
    expect(d.gatewayPodLabels).toEqual({ "app.kubernetes.io/name": "kruntimes-gateway" });
    const o = parseOptions(
      [
        "--dataplane-port=9444",
        "--dataplane-subjects=system:serviceaccount:krt:krt-gateway",
        "--dataplane-network-policy",
        "--gateway-namespace=krt",
        "--gateway-pod-labels=app.kubernetes.io/name=kruntimes-gateway,app.kubernetes.io/instance=krt",
      ],
      {},
    );
    expect(o).toMatchObject({
      dataplanePort: 9444,
      dataplaneSubjects: ["system:serviceaccount:krt:krt-gateway"],
      dataplaneNetworkPolicy: true,
      gatewayNamespace: "krt",
      gatewayPodLabels: {
        "app.kubernetes.io/name": "kruntimes-gateway",
        "app.kubernetes.io/instance": "krt",
      },
    });
    expect(() => parseOptions(["--dataplane-port=8081"], {})).toThrow(/other than --runtimed-port/);
    expect(() => parseOptions(["--gateway-pod-labels=novalue"], {})).toThrow(/key=value/);
  });

  test("flags win over env, env over defaults; both flag spellings work", () => {
    const o = parseOptions(["--metrics-port=9000", "--log-level", "debug", "--leader-elect=false"], {
      KRT_METRICS_PORT: "7000",
      KRT_BIND_CONCURRENCY: "4",
      POD_NAMESPACE: "krt",
    });
    expect(o.metricsPort).toBe(9000);
    expect(o.logLevel).toBe("debug");
    expect(o.leaderElect).toBe(false);
    expect(o.bindConcurrency).toBe(4);
    expect(o.leaseNamespace).toBe("krt");
  });

  test("durations and lists", () => {
    const o = parseOptions(
      ["--heartbeat-stale-after", "1m30s", "--runtimed-command=bun,controller/testing/heartbeat.ts"],
      {},
    );
    expect(o.staleAfterMs).toBe(90_000);
    expect(o.runtimedCommand).toEqual(["bun", "controller/testing/heartbeat.ts"]);
  });

  test("waiting reasons: 1 s, InsufficientCapacity 10 s, never below the other reasons' delay", () => {
    const d = parseOptions([], {});
    expect([d.waitingReasonDelayMs, d.capacityWaitReasonDelayMs]).toEqual([1000, 10_000]);
    const slow = parseOptions(["--waiting-reason-delay=30s"], {});
    expect(slow.capacityWaitReasonDelayMs).toBe(30_000);
    const fast = parseOptions(["--capacity-wait-reason-delay=2s"], {});
    expect(fast.capacityWaitReasonDelayMs).toBe(2000);
  });

  const bad: [string, string[]][] = [
    ["unknown flag", ["--nope=1"]],
    ["bad integer", ["--metrics-port=abc"]],
    ["bad duration", ["--assume-ttl=soon"]],
    ["missing value", ["--namespace"]],
    ["renew deadline not below lease duration", ["--leader-renew-deadline=20s"]],
    ["stale threshold below the lease duration", ["--heartbeat-stale-after=5s"]],
  ];
  for (const [name, argv] of bad)
    test(`rejects ${name}`, () => expect(() => parseOptions(argv, {})).toThrow(OptionsError));

  test("webhook: off by default; on with a port, its certificate and the controller's own user", () => {
    expect(parseOptions([], {}).webhook).toBeUndefined();
    const flags = ["--webhook-port=9443", "--webhook-cert-file=/c/tls.crt", "--webhook-key-file=/c/tls.key"];
    expect(
      parseOptions(flags, { POD_NAMESPACE: "krt", SERVICE_ACCOUNT_NAME: "krt-controller" }).webhook,
    ).toEqual({
      host: "0.0.0.0",
      port: 9443,
      certFile: "/c/tls.crt",
      keyFile: "/c/tls.key",
      controllerUser: "system:serviceaccount:krt:krt-controller",
    });
    expect(
      parseOptions([...flags, "--webhook-controller-user=system:serviceaccount:a:b"], {}).webhook
        ?.controllerUser,
    ).toBe("system:serviceaccount:a:b");
    expect(() => parseOptions(flags, {})).toThrow("--webhook-controller-user");
    expect(() => parseOptions(["--webhook-port=9443"], {})).toThrow("--webhook-cert-file");
  });

  test("help lists every flag with its env name", () => {
    expect(helpText()).toContain("--heartbeat-stale-after");
    expect(helpText()).toContain("KRT_HEARTBEAT_STALE_AFTER");
  });
});
