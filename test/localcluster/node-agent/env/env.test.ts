import { describe, expect, test } from "bun:test";
import type { ObjectSource } from "../api/object-source.ts";
import type { Pod } from "../api/types.ts";
import { ContainerConfigError, containerArgv, containerEnv, processEnv } from "./container-env.ts";
import { expand, lookupIn } from "./expand.ts";
import { divideQuantity, parseQuantity } from "./quantity.ts";

describe("$(VAR) expansion", () => {
  const look = lookupIn({ A: "1", B: "two" });
  test.each([
    ["$(A)-$(B)", "1-two"],
    ["$(MISSING)", "$(MISSING)"],
    ["$$(A)", "$(A)"],
    ["$$$(A)", "$1"],
    ["cost $5", "cost $5"],
    ["$(A", "$(A"],
    ["trailing $", "trailing $"],
    ["", ""],
  ])("%p → %p", (input, want) => {
    expect(expand(input, look)).toBe(want);
  });
});

describe("container argv", () => {
  const image = { entrypoint: ["/bin/ep"], cmd: ["default"] };
  const vars = new Map([["X", "y"]]);
  test("image entrypoint and cmd when the container sets neither", () => {
    expect(containerArgv(image, { name: "c" }, vars)).toEqual(["/bin/ep", "default"]);
  });
  test("args replace cmd only", () => {
    expect(containerArgv(image, { name: "c", args: ["$(X)"] }, vars)).toEqual(["/bin/ep", "y"]);
  });
  test("command replaces entrypoint and drops cmd", () => {
    expect(containerArgv(image, { name: "c", command: ["sh", "$(X)"] }, vars)).toEqual(["sh", "y"]);
  });
});

const pod: Pod = {
  metadata: { name: "p", namespace: "ns", uid: "u1", labels: { app: "web" }, annotations: { "a/b": "c" } },
  spec: {
    nodeName: "n1",
    serviceAccountName: "sa",
    containers: [{ name: "c", resources: { limits: { memory: "64Mi" }, requests: { cpu: "250m" } } }],
  },
};
const facts = { podIP: "127.1.0.9", hostIP: "127.0.0.1", allocatable: { cpu: "4", memory: "8Gi" } };
const objects: ObjectSource = {
  configMap: async (_ns, name) =>
    name === "cm" ? { metadata: {}, data: { K: "v", "bad key": "x" } } : undefined,
  secret: async (_ns, name) =>
    name === "s" ? { metadata: {}, data: { pw: Buffer.from("hunter2").toString("base64") } } : undefined,
};
const svc = { apiserverHost: "127.0.0.1", apiserverPort: 6443 };

describe("container env", () => {
  test("envFrom with prefix, env in order with $(VAR) of earlier ones, downward API, service vars", async () => {
    const env = await containerEnv(
      pod,
      {
        ...pod.spec.containers[0]!,
        envFrom: [
          { configMapRef: { name: "cm" }, prefix: "CM_" },
          { secretRef: { name: "missing", optional: true } },
        ],
        env: [
          { name: "A", value: "$(CM_K)-$(KUBERNETES_SERVICE_PORT)-$(LATER)" },
          { name: "PW", valueFrom: { secretKeyRef: { name: "s", key: "pw" } } },
          { name: "OPT", valueFrom: { configMapKeyRef: { name: "cm", key: "nope", optional: true } } },
          { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: "ANN", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['a/b']" } } },
          { name: "SA", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
          { name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
          { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
          { name: "REQ", valueFrom: { resourceFieldRef: { resource: "requests.cpu", divisor: "1m" } } },
          { name: "KUBERNETES_SERVICE_HOST", value: "mine" },
          { name: "LATER", value: "l" },
        ],
      },
      facts,
      objects,
      svc,
    );
    expect(Object.fromEntries(env)).toMatchObject({
      CM_K: "v",
      A: "v-6443-$(LATER)",
      PW: "hunter2",
      IP: "127.1.0.9",
      APP: "web",
      ANN: "c",
      SA: "sa",
      MEM: "64",
      CPU: "4",
      REQ: "250",
      KUBERNETES_SERVICE_HOST: "mine",
      KUBERNETES_SERVICE_PORT: "6443",
    });
    expect(env.has("OPT")).toBe(false);
    expect(env.has("CM_bad key")).toBe(false);
  });

  test("a missing ConfigMap, Secret or key is a container config error (kubelet's messages)", async () => {
    const run = (e: Parameters<typeof containerEnv>[1]) => containerEnv(pod, e, facts, objects, svc);
    await expect(run({ name: "c", envFrom: [{ configMapRef: { name: "gone" } }] })).rejects.toThrow(
      new ContainerConfigError('configmap "gone" not found'),
    );
    await expect(
      run({ name: "c", env: [{ name: "X", valueFrom: { secretKeyRef: { name: "s", key: "nope" } } }] }),
    ).rejects.toThrow("couldn't find key nope in Secret ns/s");
  });

  test("process env: image env underneath, HOSTNAME on top", () => {
    const out = processEnv({ PATH: "/img", HOSTNAME: "x", K: "img" }, new Map([["K", "pod"]]), "p");
    expect(out).toEqual({ PATH: "/img", HOSTNAME: "p", K: "pod" });
  });
});

describe("quantities", () => {
  test.each([
    ["500m", 0.5],
    ["1.5Gi", 1.5 * 2 ** 30],
    ["2e3", 2000],
    ["128974848", 128974848],
  ])("%p = %p", (q, n) => {
    expect(parseQuantity(q)).toBe(n);
  });
  test("downward API values are rounded up per divisor", () => {
    expect(divideQuantity("cpu", "250m", "1")).toBe("1");
    expect(divideQuantity("cpu", "250m", "1m")).toBe("250");
    expect(divideQuantity("memory", "1Gi", "1Mi")).toBe("1024");
    expect(() => parseQuantity("12xyz")).toThrow(/invalid quantity/);
  });
});
