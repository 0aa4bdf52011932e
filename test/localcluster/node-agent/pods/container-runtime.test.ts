import { describe, expect, test } from "bun:test";
import pino from "pino";
import type { ContainerStatus } from "../api/types.ts";
import { ContainerRuntime, type PodSandbox } from "./container-runtime.ts";
import type { PodContext } from "./pod-context.ts";

// Only what status() and seed() touch; starting processes is covered by the integration suites.
const ctx = {
  log: pino({ level: "silent" }),
  restartBackoffInitialMs: 1000,
  restartBackoffMaxMs: 30_000,
  enqueue() {},
} as unknown as PodContext;
const sandbox: PodSandbox = {
  uid: "u1",
  podKey: "ns/p",
  podDir: "/tmp/krt-unused",
  facts: { podIP: "127.1.0.2", hostIP: "127.0.0.1", allocatable: { cpu: "1", memory: "1Gi" } },
  hostname: "p",
  hostsFile: "/tmp/krt-unused/hosts",
  volumes: new Map(),
  terminationGracePeriodSeconds: 30,
};
const status = (s: Partial<ContainerStatus>): ContainerStatus => ({
  name: "c",
  image: "busybox",
  imageID: "krtlocal://busybox@sha256:x",
  ready: false,
  restartCount: 2,
  state: {},
  lastState: {},
  ...s,
});
const rt = () => new ContainerRuntime({ name: "c", image: "busybox" }, "app", ctx, sandbox);

describe("container runtime: what an agent restart adopts", () => {
  test("a never-started container waits with ContainerCreating", () => {
    expect(rt().status("p", "ns").state).toEqual({ waiting: { reason: "ContainerCreating" } });
  });
  test("a finished container stays terminated with its restart count", () => {
    const c = rt();
    c.seed(status({ state: { terminated: { exitCode: 0, reason: "Completed" } } }));
    const s = c.status("p", "ns");
    expect(s.state).toEqual({ terminated: { exitCode: 0, reason: "Completed" } });
    expect(s.restartCount).toBe(2);
    expect(c.succeeded).toBe(true);
  });
  test("a container that was running died with the agent: terminated 137, and a restart shows CrashLoopBackOff", () => {
    const c = rt();
    c.seed(status({ state: { running: { startedAt: "2026-01-01T00:00:00Z" } } }));
    expect(c.exited).toMatchObject({ exitCode: 137, reason: "Error", startedAt: "2026-01-01T00:00:00Z" });
    c.restartPending = true;
    const s = c.status("p", "ns");
    expect(s.state.waiting?.reason).toBe("CrashLoopBackOff");
    expect(s.lastState.terminated?.exitCode).toBe(137);
    expect(c.backoffRemainingMs()).toBe(0);
  });
  test("a crash-looping container keeps its last termination", () => {
    const c = rt();
    c.seed(
      status({
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { exitCode: 3 } },
      }),
    );
    expect(c.exited?.exitCode).toBe(3);
    expect(c.succeeded).toBe(false);
  });
});
