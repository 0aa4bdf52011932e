/**
 * The Runtime, Run and PersistentWorkspace CRDs on a real apiserver: installs them from `@kruntimes/api`, then applies
 * a table of valid and invalid objects (creates, then updates of spec, status and scale) and checks
 * the exact outcome of each — accepted (with the defaults the schema promises), or rejected with a
 * message that contains the expected text. The examples in docs/concepts/api.md are applied too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  crds,
  DEFAULT_RETRY_ON,
  GROUP,
  type PersistentWorkspace,
  RUN_KIND,
  type Run,
  RunResource,
  type Runtime,
  RuntimeResource,
  WORKSPACE_KIND,
  WorkspaceResource,
} from "@kruntimes/api";
import { type KubeClient, KubeError, path, resourcePath } from "@kruntimes/kube";
import YAML from "yaml";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
if (!cluster) {
  console.warn(
    "crd-validation: skipped because KUBECONFIG is unset (scripts/test.sh starts a cluster and sets it)",
  );
}
const suite = cluster ? describe : describe.skip;

// ---- fixtures ----------------------------------------------------------------------------------

type Kind = Runtime | Run | PersistentWorkspace;
const FIXTURES = join(import.meta.dir, "fixtures", "crds");
const fixture = <T extends Kind>(file: string): T =>
  YAML.parse(readFileSync(join(FIXTURES, file), "utf8")) as T;
const bases = {
  runtime: () => fixture<Runtime>("runtime.yaml"),
  task: () => fixture<Run>("run-task.yaml"),
  function: () => fixture<Run>("run-function.yaml"),
  session: () => fixture<Run>("run-session.yaml"),
  workspace: () => fixture<PersistentWorkspace>("workspace.yaml"),
} as const;

const resourceOf = (o: Kind) =>
  o.kind === RUN_KIND ? RunResource : o.kind === WORKSPACE_KIND ? WorkspaceResource : RuntimeResource;

// ---- the table ---------------------------------------------------------------------------------

type Outcome = { accepted: true } | { rejected: string[] };
const ACCEPTED: Outcome = { accepted: true };
const rejected = (...texts: string[]): Outcome => ({ rejected: texts });

interface Step {
  name: string;
  /** A JSON merge patch (`null` removes a field), or with `replace`, a change to a copy of the object. */
  patch?: unknown;
  /** Update with PUT: the object as last read, changed by this function, is sent whole. */
  replace?: (o: Kind) => void;
  subresource?: "status" | "scale";
  expect: Outcome;
  /** On an accepted step: assertions on the object read back after it. */
  check?: (o: Kind) => void;
}

interface Case {
  name: string;
  base: keyof typeof bases;
  /** Changes the base (whose name the runner has already set) into the object to create. */
  mutate?: (o: Kind) => void;
  expect: Outcome;
  /** On an accepted create: assertions on the created object. */
  check?: (o: Kind) => void;
  /** Applied in order to the created object. */
  updates?: Step[];
}

const asRuntime = (o: Kind) => o as Runtime;
const asRun = (o: Kind) => o as Run;
const asWorkspace = (o: Kind) => o as PersistentWorkspace;
const repeat = (n: number, f: (i: number) => [string, unknown]) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => f(i)));

const runtimeCases: Case[] = [
  {
    name: "a minimal Runtime is accepted and defaulted",
    base: "runtime",
    expect: ACCEPTED,
    check: (o) => {
      const { spec } = asRuntime(o);
      expect(spec.replicas).toBe(1);
      expect(spec.capacity).toEqual({ runs: 8 });
      expect(spec.workspace).toEqual({ emptyDir: {} });
      // Unknown Pod and Container fields are preserved, not pruned.
      expect(spec.template.spec.terminationGracePeriodSeconds).toBe(5);
      expect(spec.template.spec.containers[0]?.env).toEqual([{ name: "LANG", value: "C.UTF-8" }]);
    },
  },
  {
    name: "without a container named runtime it is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.template.spec.containers[0]!.name = "main";
    },
    expect: rejected('spec.template.spec.containers needs a container named "runtime"'),
  },
  {
    name: "a container named runtimed is rejected (reserved for the sidecar)",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.template.spec.containers.push({ name: "runtimed", image: "x" });
    },
    expect: rejected('the container name "runtimed" is reserved'),
  },
  {
    name: "two containers with the same name are rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.template.spec.containers.push({ name: "runtime", image: "y" });
    },
    expect: rejected("spec.template.spec.containers[1]", "Duplicate value"),
  },
  {
    name: "without a template it is rejected",
    base: "runtime",
    mutate: (o) => {
      delete (asRuntime(o).spec as Partial<Runtime["spec"]>).template;
    },
    expect: rejected("spec.template: Required value"),
  },
  {
    name: "negative replicas are rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.replicas = -1;
    },
    expect: rejected("spec.replicas", "greater than or equal to 0"),
  },
  {
    name: "replicas above the bound are rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.replicas = 1001;
    },
    expect: rejected("spec.replicas", "less than or equal to 1000"),
  },
  {
    name: "capacity with runs 0 is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.capacity = { runs: 0 };
    },
    expect: rejected("spec.capacity", "runs must be at least 1"),
  },
  {
    name: "capacity with a badly named resource is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.capacity = { runs: 4, GPU_slots: 1 };
    },
    expect: rejected("resource names must be lowercase alphanumerics"),
  },
  {
    name: "capacity with more than 16 resources is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.capacity = repeat(17, (i) => [`r${i}`, 1]) as Record<string, number>;
    },
    expect: rejected("spec.capacity", "at most 16"),
  },
  {
    name: "custom capacity is kept as given",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.capacity = { runs: 64, licenses: 2 };
    },
    expect: ACCEPTED,
    check: (o) => expect(asRuntime(o).spec.capacity).toEqual({ runs: 64, licenses: 2 }),
  },
  {
    name: "a workspace with two volume types is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.workspace = { emptyDir: {}, persistentVolumeClaim: { claimName: "ws" } };
    },
    expect: rejected("spec.workspace", "at most 1"),
  },
  {
    name: "an s3 artifact store is accepted and defaulted",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.artifactStore = {
        s3: { bucket: "krt-artifacts", region: "eu-west-1", credentialsSecretRef: { name: "s3-creds" } },
      };
    },
    expect: ACCEPTED,
    check: (o) => expect(asRuntime(o).spec.artifactStore?.s3?.pathStyle).toBe(false),
  },
  {
    name: "an artifact store with both s3 and filesystem is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.artifactStore = {
        s3: { bucket: "krt-artifacts" },
        filesystem: { claimName: "artifacts" },
      };
    },
    expect: rejected("spec.artifactStore needs exactly one of s3 or filesystem"),
  },
  {
    name: "an empty artifact store is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.artifactStore = {};
    },
    expect: rejected("spec.artifactStore needs exactly one of s3 or filesystem"),
  },
  {
    name: "an s3 endpoint that is not a URL is rejected",
    base: "runtime",
    mutate: (o) => {
      asRuntime(o).spec.artifactStore = { s3: { bucket: "krt-artifacts", endpoint: "minio:9000" } };
    },
    expect: rejected("spec.artifactStore.s3.endpoint", "should match"),
  },
  {
    name: "a name longer than 63 characters is rejected",
    base: "runtime",
    mutate: (o) => {
      o.metadata.name = "r".repeat(64);
    },
    expect: rejected("a Runtime name is a DNS-1035 label (at most 63 lowercase letters"),
  },
  {
    name: "spec is mutable: scale, template and capacity change; status and scale subresources work",
    base: "runtime",
    expect: ACCEPTED,
    updates: [
      {
        name: "replicas and capacity change",
        patch: { spec: { replicas: 3, capacity: { runs: 16 } } },
        expect: ACCEPTED,
        check: (o) => expect(asRuntime(o).spec.capacity).toEqual({ runs: 16 }),
      },
      {
        name: "the scale subresource sets replicas",
        subresource: "scale",
        patch: { spec: { replicas: 0 } },
        expect: ACCEPTED,
        check: (o) => expect(asRuntime(o).spec.replicas).toBe(0),
      },
      {
        name: "status with conditions is accepted",
        subresource: "status",
        patch: {
          status: {
            observedGeneration: 3,
            replicas: 2,
            readyReplicas: 1,
            availableReplicas: 1,
            conditions: [
              {
                type: "Ready",
                status: "False",
                reason: "PodsNotReady",
                message: "1 of 2 pods ready",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              },
            ],
          },
        },
        expect: ACCEPTED,
        check: (o) => expect(asRuntime(o).status?.readyReplicas).toBe(1),
      },
      {
        name: "a condition without a reason is rejected",
        subresource: "status",
        patch: {
          status: {
            conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }],
          },
        },
        expect: rejected("status.conditions[0].reason: Required value"),
      },
      {
        name: "a condition status outside True/False/Unknown is rejected",
        subresource: "status",
        patch: {
          status: {
            conditions: [
              {
                type: "Ready",
                status: "Yes",
                reason: "X",
                message: "",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              },
            ],
          },
        },
        expect: rejected("status.conditions[0].status", 'Unsupported value: "Yes"'),
      },
    ],
  },
];

const runCases: Case[] = [
  {
    name: "an inline task is accepted and defaulted",
    base: "task",
    expect: ACCEPTED,
    check: (o) => {
      const { spec } = asRun(o);
      expect(spec.resources).toEqual({ requests: { runs: 1 } });
      expect(spec.retryPolicy).toBeUndefined();
      expect(spec.source?.inline).toContain("hello from $NAME");
    },
  },
  {
    name: "inline with entrypoint is rejected with what to change",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.mode.task = { entrypoint: "/scripts/run.sh" };
    },
    expect: rejected("spec.source.inline is a standalone script: remove spec.mode.task.entrypoint"),
  },
  {
    name: "inline with args is rejected with what to change",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.mode.task = { args: ["--verbose"] };
    },
    expect: rejected("spec.source.inline is a standalone script", "pass values through spec.env"),
  },
  {
    name: "entrypoint with args is accepted",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
      asRun(o).spec.mode.task = { entrypoint: "/scripts/build.sh", args: ["--target", "release"] };
    },
    expect: ACCEPTED,
  },
  {
    name: "args alone (shell commands) are accepted",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
      asRun(o).spec.mode.task = { args: ["echo one", "echo two"] };
    },
    expect: ACCEPTED,
  },
  {
    name: "a task without any input is rejected",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
    },
    expect: rejected("a task needs an input: set spec.source.inline"),
  },
  {
    name: "a task whose only input is an empty args list is rejected",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
      asRun(o).spec.mode.task = { args: [] };
    },
    expect: rejected("a task needs an input"),
  },
  {
    name: "an empty source is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.source = {} as never;
    },
    expect: rejected("spec.source.inline: Required value"),
  },
  {
    name: "an inline script over 256 Ki characters is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.source = { inline: "x".repeat(256 * 1024 + 1) };
    },
    expect: rejected("spec.source.inline", "262144"),
  },
  {
    name: "an inline script of exactly 256 Ki characters is accepted",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.source = { inline: "x".repeat(256 * 1024) };
    },
    expect: ACCEPTED,
  },
  {
    name: "two modes at once are rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.mode.session = {};
    },
    expect: rejected("spec.mode needs exactly one of task, function or session"),
  },
  {
    name: "no mode at all is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.mode = {};
    },
    expect: rejected("spec.mode needs exactly one of task, function or session"),
  },
  {
    name: "a missing runtime is rejected",
    base: "task",
    mutate: (o) => {
      delete (asRun(o).spec as Partial<Run["spec"]>).runtime;
    },
    expect: rejected("spec.runtime: Required value"),
  },
  {
    name: "a runtime name that is not a DNS label is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.runtime = "Bash_Runtime";
    },
    expect: rejected("spec.runtime", "should match"),
  },
  {
    name: "a function with inline source is accepted and its handler defaulted",
    base: "function",
    expect: ACCEPTED,
    check: (o) => expect(asRun(o).spec.mode.function?.handler).toBe("handler"),
  },
  {
    name: "a function without source is rejected",
    base: "function",
    mutate: (o) => {
      delete asRun(o).spec.source;
    },
    expect: rejected("function mode needs spec.source.inline"),
  },
  {
    name: "a function with every option is accepted and concurrency defaults to 1 without it",
    base: "function",
    mutate: (o) => {
      const fn = asRun(o).spec.mode.function;
      if (fn) {
        fn.idleTimeout = "10m";
        fn.maxRequestBytes = 4096;
        fn.maxResponseBytes = 16 * 1024 * 1024;
        fn.invocationTimeout = "15m";
      }
    },
    expect: ACCEPTED,
    check: (o) => {
      expect(asRun(o).spec.mode.function?.concurrency).toBe(1);
      expect(asRun(o).spec.mode.function?.idleTimeout).toBe("10m");
    },
  },
  ...(
    [
      ["concurrency 0", { concurrency: 0 }, "spec.mode.function.concurrency"],
      ["concurrency above the maximum", { concurrency: 65 }, "spec.mode.function.concurrency"],
      ["maxRequestBytes 0", { maxRequestBytes: 0 }, "spec.mode.function.maxRequestBytes"],
      [
        "maxRequestBytes above 16 MiB",
        { maxRequestBytes: 16 * 1024 * 1024 + 1 },
        "spec.mode.function.maxRequestBytes",
      ],
      [
        "maxResponseBytes above 16 MiB",
        { maxResponseBytes: 16 * 1024 * 1024 + 1 },
        "spec.mode.function.maxResponseBytes",
      ],
      [
        "an idleTimeout that is not a duration",
        { idleTimeout: "ten minutes" },
        "spec.mode.function.idleTimeout",
      ],
      ["a zero idleTimeout", { idleTimeout: "0s" }, "must be a positive duration"],
      [
        "an invocationTimeout above 15m",
        { invocationTimeout: "16m" },
        "invocationTimeout must be at most 15m",
      ],
      ["a handler that is not an identifier", { handler: "my-handler" }, "spec.mode.function.handler"],
    ] as const
  ).map(
    ([what, fields, text]): Case => ({
      name: `a function with ${what} is rejected`,
      base: "function",
      mutate: (o) => {
        Object.assign(asRun(o).spec.mode.function ?? {}, fields);
      },
      expect: rejected(text),
    }),
  ),
  {
    name: "a function's options are part of the immutable mode",
    base: "function",
    expect: ACCEPTED,
    updates: [
      {
        name: "changing concurrency",
        patch: { spec: { mode: { function: { concurrency: 4 } } } },
        expect: rejected("spec.mode is immutable"),
      },
    ],
  },
  {
    name: "a session with every option is accepted and maxQueuedOperations defaults",
    base: "session",
    mutate: (o) => {
      asRun(o).spec.mode.session = {
        idleTimeout: "5m",
        defaultOperationTimeout: "1m",
        maxOperationTimeout: "30m",
      };
    },
    expect: ACCEPTED,
    check: (o) => expect(asRun(o).spec.mode.session?.maxQueuedOperations).toBe(64),
  },
  ...(
    [
      ["maxQueuedOperations 0", { maxQueuedOperations: 0 }, "spec.mode.session.maxQueuedOperations"],
      [
        "maxQueuedOperations above the maximum",
        { maxQueuedOperations: 1025 },
        "spec.mode.session.maxQueuedOperations",
      ],
      [
        "a maxOperationTimeout above 60m",
        { maxOperationTimeout: "61m" },
        "maxOperationTimeout must be at most 60m",
      ],
      [
        "a defaultOperationTimeout above its maxOperationTimeout",
        { defaultOperationTimeout: "2m", maxOperationTimeout: "1m" },
        "defaultOperationTimeout must not exceed maxOperationTimeout",
      ],
      [
        "a defaultOperationTimeout above 60m",
        { defaultOperationTimeout: "2h" },
        "defaultOperationTimeout must not exceed maxOperationTimeout",
      ],
      ["an idleTimeout that is not a duration", { idleTimeout: "soon" }, "spec.mode.session.idleTimeout"],
    ] as const
  ).map(
    ([what, fields, text]): Case => ({
      name: `a session with ${what} is rejected`,
      base: "session",
      mutate: (o) => {
        Object.assign(asRun(o).spec.mode.session ?? {}, fields);
      },
      expect: rejected(text),
    }),
  ),
  {
    name: "a session is accepted",
    base: "session",
    expect: ACCEPTED,
  },
  {
    name: "a session with source is rejected",
    base: "session",
    mutate: (o) => {
      asRun(o).spec.source = { inline: "echo hi" };
    },
    expect: rejected("session mode takes no spec.source"),
  },
  {
    name: "an env name starting with a digit is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.env = [{ name: "1NAME", value: "x" }];
    },
    expect: rejected("spec.env[0].name", "should match"),
  },
  {
    name: "duplicate env names are rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.env = [
        { name: "A", value: "1" },
        { name: "A", value: "2" },
      ];
    },
    expect: rejected("spec.env[1]", "Duplicate value"),
  },
  {
    name: "more than 128 env vars are rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.env = Array.from({ length: 129 }, (_, i) => ({ name: `V${i}`, value: "" }));
    },
    expect: rejected("spec.env", "at most 128"),
  },
  {
    name: "an env value over 32 Ki characters is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.env = [{ name: "BIG", value: "x".repeat(32 * 1024 + 1) }];
    },
    expect: rejected("spec.env[0].value", "32768"),
  },
  {
    name: "an entrypoint over 4096 characters is rejected",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
      asRun(o).spec.mode.task = { entrypoint: `/${"a".repeat(4096)}` };
    },
    expect: rejected("spec.mode.task.entrypoint", "4096"),
  },
  {
    name: "more than 256 args are rejected",
    base: "task",
    mutate: (o) => {
      delete asRun(o).spec.source;
      asRun(o).spec.mode.task = { args: Array.from({ length: 257 }, () => "true") };
    },
    expect: rejected("spec.mode.task.args", "at most 256"),
  },
  {
    name: "a TTL above one year is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.ttlSecondsAfterFinished = 366 * 24 * 3600 + 1;
    },
    expect: rejected("spec.ttlSecondsAfterFinished", "less than or equal to"),
  },
  {
    name: "a backoff multiplier above 10 is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 2, backoff: { multiplier: 11 } };
    },
    expect: rejected("spec.retryPolicy.backoff.multiplier", "less than or equal to 10"),
  },
  {
    name: "a bad backoff duration is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 2, backoff: { initial: "soon" } };
    },
    expect: rejected("spec.retryPolicy.backoff.initial", "should match"),
  },
  {
    name: "Immediate on a new task is accepted (cancelled before it starts)",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.termination = { mode: "Immediate" };
    },
    expect: ACCEPTED,
  },
  {
    name: "an env var without a value is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.env = [{ name: "A" } as never];
    },
    expect: rejected("spec.env[0].value: Required value"),
  },
  {
    name: "a compound timeout is accepted",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.timeout = "1h30m";
    },
    expect: ACCEPTED,
  },
  {
    name: "a zero timeout is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.timeout = "0s";
    },
    expect: rejected("spec.timeout", "must be a positive duration"),
  },
  {
    name: "a timeout in words is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.timeout = "30 seconds";
    },
    expect: rejected("spec.timeout", "should match"),
  },
  {
    name: "a retry policy is accepted and defaulted",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 3 };
    },
    expect: ACCEPTED,
    check: (o) =>
      expect(asRun(o).spec.retryPolicy).toEqual({
        maxAttempts: 3,
        backoff: { initial: "1s", max: "5m", multiplier: 2 },
        retryOn: [...DEFAULT_RETRY_ON],
      }),
  },
  {
    name: "maxAttempts 0 is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 0 };
    },
    expect: rejected("spec.retryPolicy.maxAttempts", "greater than or equal to 1"),
  },
  {
    name: "maxAttempts above 10 is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 11 };
    },
    expect: rejected("spec.retryPolicy.maxAttempts", "less than or equal to 10"),
  },
  {
    name: "retrying on a reason outside the retryable set is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 2, retryOn: ["Cancelled" as never] };
    },
    expect: rejected("spec.retryPolicy.retryOn[0]", 'Unsupported value: "Cancelled"'),
  },
  {
    name: "a backoff whose initial delay exceeds its max is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.retryPolicy = { maxAttempts: 2, backoff: { initial: "10m", max: "1m" } };
    },
    expect: rejected("spec.retryPolicy.backoff.initial must not exceed backoff.max"),
  },
  {
    name: "requests with runs 0 are rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.resources = { requests: { runs: 0 } };
    },
    expect: rejected("spec.resources.requests", "runs must be at least 1"),
  },
  {
    name: "requests of another logical resource are kept as given",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.resources = { requests: { licenses: 1 } };
    },
    expect: ACCEPTED,
    check: (o) => expect(asRun(o).spec.resources).toEqual({ requests: { licenses: 1 } }),
  },
  {
    name: "a negative TTL is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.ttlSecondsAfterFinished = -1;
    },
    expect: rejected("spec.ttlSecondsAfterFinished", "greater than or equal to 0"),
  },
  {
    name: "Drain on a task is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.termination = { mode: "Drain" };
    },
    expect: rejected("spec.termination.mode Drain is for sessions only"),
  },
  {
    name: "a termination mode outside Immediate/Drain is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.termination = { mode: "Later" as never };
    },
    expect: rejected("spec.termination.mode", 'Unsupported value: "Later"'),
  },
  {
    name: "status sent with a create is dropped (status subresource)",
    base: "task",
    mutate: (o) => {
      asRun(o).status = { phase: "Succeeded", exitCode: 0 };
    },
    expect: ACCEPTED,
    check: (o) => expect(asRun(o).status).toBeUndefined(),
  },
];

const immutable = (field: string, patch: unknown): Step => ({
  name: `changing spec.${field} is rejected`,
  patch: { spec: patch },
  expect: rejected(`spec.${field} is immutable`),
});

const runUpdateCases: Case[] = [
  {
    name: "a task's execution fields are immutable; TTL, labels and annotations are not",
    base: "task",
    expect: ACCEPTED,
    updates: [
      immutable("runtime", { runtime: "python" }),
      immutable("source", { source: { inline: "echo changed" } }),
      immutable("env", { env: [{ name: "NAME", value: "changed" }] }),
      immutable("timeout", { timeout: "1m" }),
      immutable("retryPolicy", { retryPolicy: { maxAttempts: 2 } }),
      immutable("resources", { resources: { requests: { runs: 2 } } }),
      immutable("mode", { mode: { task: { args: ["echo"] } } }),
      {
        name: "removing the timeout is rejected",
        patch: { spec: { timeout: null } },
        expect: rejected("spec.timeout is immutable"),
      },
      {
        name: "changing the inline script with PUT is rejected",
        replace: (o) => {
          asRun(o).spec.source = { inline: "echo replaced" };
        },
        expect: rejected("spec.source is immutable"),
      },
      {
        name: "adding env with PUT is rejected",
        replace: (o) => {
          asRun(o).spec.env = [...(asRun(o).spec.env ?? []), { name: "EXTRA", value: "1" }];
        },
        expect: rejected("spec.env is immutable"),
      },
      {
        name: "adding retryPolicy is rejected",
        patch: { spec: { retryPolicy: { maxAttempts: 3 } } },
        expect: rejected("spec.retryPolicy is immutable"),
      },
      {
        name: "switching the task to entrypoint input is rejected",
        patch: { spec: { source: null, mode: { task: { entrypoint: "/x.sh" } } } },
        expect: rejected("spec.mode is immutable", "spec.source is immutable"),
      },
      {
        name: "Drain on a task is rejected on update too",
        patch: { spec: { termination: { mode: "Drain" } } },
        expect: rejected("spec.termination.mode Drain is for sessions only"),
      },
      {
        name: "TTL changes",
        patch: { spec: { ttlSecondsAfterFinished: 60 } },
        expect: ACCEPTED,
        check: (o) => expect(asRun(o).spec.ttlSecondsAfterFinished).toBe(60),
      },
      {
        name: "labels and annotations change",
        patch: { metadata: { labels: { team: "ci" }, annotations: { note: "anything" } } },
        expect: ACCEPTED,
      },
      {
        name: "termination Immediate (cancel) is accepted",
        patch: { spec: { termination: { mode: "Immediate" } } },
        expect: ACCEPTED,
      },
      {
        name: "removing termination is rejected",
        patch: { spec: { termination: null } },
        expect: rejected("spec.termination cannot be removed once set"),
      },
    ],
  },
  {
    name: "a session's termination moves forward only: unset → Drain → Immediate",
    base: "session",
    expect: ACCEPTED,
    updates: [
      { name: "Drain is accepted", patch: { spec: { termination: { mode: "Drain" } } }, expect: ACCEPTED },
      {
        name: "Immediate after Drain is accepted",
        patch: { spec: { termination: { mode: "Immediate" } } },
        expect: ACCEPTED,
      },
      {
        name: "back to Drain is rejected",
        patch: { spec: { termination: { mode: "Drain" } } },
        expect: rejected("spec.termination.mode can only move forward"),
      },
    ],
  },
  {
    name: "a session cancelled outright cannot then drain: unset → Immediate, not back to Drain",
    base: "session",
    expect: ACCEPTED,
    updates: [
      {
        name: "Immediate (cancel) is accepted",
        replace: (o) => {
          asRun(o).spec.termination = { mode: "Immediate" };
        },
        expect: ACCEPTED,
      },
      {
        name: "Drain after Immediate is rejected",
        replace: (o) => {
          asRun(o).spec.termination = { mode: "Drain" };
        },
        expect: rejected("spec.termination.mode can only move forward"),
      },
      {
        name: "changing the session timeout is rejected",
        replace: (o) => {
          asRun(o).spec.timeout = "2h";
        },
        expect: rejected("spec.timeout is immutable"),
      },
    ],
  },
  {
    name: "a function's handler is part of the immutable mode",
    base: "function",
    expect: ACCEPTED,
    updates: [
      {
        name: "changing the handler is rejected",
        patch: { spec: { mode: { function: { handler: "other" } } } },
        expect: rejected("spec.mode is immutable"),
      },
    ],
  },
  {
    name: "Run status: phases, reasons, bounds and microsecond timing",
    base: "task",
    expect: ACCEPTED,
    updates: [
      {
        name: "a Pending status with a waiting reason is accepted",
        subresource: "status",
        patch: { status: { phase: "Pending", waitingReason: "InsufficientCapacity", observedGeneration: 1 } },
        expect: ACCEPTED,
      },
      {
        name: "a waiting reason outside the Pending set is rejected",
        subresource: "status",
        patch: { status: { waitingReason: "PodGone" } },
        expect: rejected("status.waitingReason", 'Unsupported value: "PodGone"'),
      },
      {
        name: "a bound, finished attempt with int64 microsecond timing is accepted exactly",
        subresource: "status",
        patch: {
          status: {
            phase: "Succeeded",
            reason: "Completed",
            attempt: 1,
            assignment: { pod: "bash-7c9f-x2", podUID: "0b6f7a52-3e0c-4b0e-9d43-1c6f2f1a9e01", attempt: 1 },
            exitCode: 0,
            outputs: { result: "42", "build.id": "abc" },
            stdoutTail: "hello from world\n",
            stdoutTruncated: false,
            artifactRefs: [
              {
                name: "report.txt",
                driver: "s3",
                type: "file",
                location: "s3://krt-artifacts/runs/c/report.txt",
                size: 12,
                digest: `sha256:${"a".repeat(64)}`,
              },
            ],
            timing: {
              createdMicros: 1_764_700_000_000_001,
              scheduledMicros: 1_764_700_000_001_234,
              startedMicros: 1_764_700_000_002_345,
              finishedMicros: 1_764_700_000_012_999,
              reportedMicros: 1_764_700_000_013_500,
            },
          },
        },
        expect: ACCEPTED,
        check: (o) => {
          expect(asRun(o).status?.timing?.scheduledMicros).toBe(1_764_700_000_001_234);
          expect(asRun(o).status?.timing?.finishedMicros).toBe(1_764_700_000_012_999);
        },
      },
      {
        name: "a phase outside the closed set is rejected",
        subresource: "status",
        patch: { status: { phase: "Done" } },
        expect: rejected("status.phase", 'Unsupported value: "Done"'),
      },
      {
        name: "a reason outside the closed set is rejected",
        subresource: "status",
        patch: { status: { reason: "Oops" } },
        expect: rejected("status.reason", 'Unsupported value: "Oops"'),
      },
      {
        name: "an output with a bad name is rejected",
        subresource: "status",
        patch: { status: { outputs: { "1st result": "x" } } },
        expect: rejected("status.outputs", "output names are letters"),
      },
      {
        name: "more than 32 outputs are rejected",
        subresource: "status",
        patch: { status: { outputs: repeat(33, (i) => [`o${i}`, "v"]) } },
        expect: rejected("status.outputs", "at most 32"),
      },
      {
        name: "a stdout tail over 16 Ki characters is rejected",
        subresource: "status",
        patch: { status: { stdoutTail: "x".repeat(16 * 1024 + 1) } },
        expect: rejected("status.stdoutTail", "16384"),
      },
      {
        name: "a negative timestamp is rejected",
        subresource: "status",
        patch: { status: { timing: { startedMicros: -1 } } },
        expect: rejected("status.timing.startedMicros", "greater than or equal to 0"),
      },
      {
        name: "an artifact with an unknown driver is rejected",
        subresource: "status",
        patch: {
          status: { artifactRefs: [{ name: "a", driver: "gcs", type: "file", location: "gs://b/a" }] },
        },
        expect: rejected("status.artifactRefs[0].driver", 'Unsupported value: "gcs"'),
      },
      {
        name: "a spec change through the status subresource is ignored",
        subresource: "status",
        patch: { spec: { runtime: "python" } },
        expect: ACCEPTED,
        check: (o) => expect(asRun(o).spec.runtime).toBe("bash"),
      },
    ],
  },
];

const workspaceCases: Case[] = [
  {
    name: "a PersistentWorkspace is accepted and defaulted (RuntimePodLocal, reclaimPolicy Delete)",
    base: "workspace",
    expect: ACCEPTED,
    check: (o) =>
      expect(asWorkspace(o).spec).toEqual({
        runtime: "bash",
        binding: "RuntimePodLocal",
        reclaimPolicy: "Delete",
      }),
  },
  {
    name: "a workspace without spec.runtime is accepted (the first Run picks it)",
    base: "workspace",
    mutate: (o) => {
      asWorkspace(o).spec = {};
    },
    expect: ACCEPTED,
  },
  {
    name: "a workspace name over 63 characters is rejected (it becomes a directory and label value)",
    base: "workspace",
    mutate: (o) => {
      o.metadata.name = "w".repeat(64);
    },
    expect: rejected("a PersistentWorkspace name is at most 63 characters"),
  },
  {
    name: "an unknown binding, reclaim policy, a bad Runtime name or a negative TTL is rejected",
    base: "workspace",
    mutate: (o) => {
      Object.assign(asWorkspace(o).spec, {
        binding: "NodeLocal",
        reclaimPolicy: "Recycle",
        runtime: "Bad_Name",
        ttlSecondsAfterUnused: -1,
      });
    },
    expect: rejected(
      'spec.binding: Unsupported value: "NodeLocal"',
      'spec.reclaimPolicy: Unsupported value: "Recycle"',
      "spec.runtime",
      "spec.ttlSecondsAfterUnused",
    ),
  },
  {
    name: "a workspace's runtime is set once; released cannot be undone; reclaim policy and TTL may change",
    base: "workspace",
    mutate: (o) => {
      asWorkspace(o).spec = {};
    },
    expect: ACCEPTED,
    updates: [
      {
        name: "setting spec.runtime later is accepted",
        patch: { spec: { runtime: "bash" } },
        expect: ACCEPTED,
      },
      {
        name: "changing spec.runtime is rejected",
        patch: { spec: { runtime: "python" } },
        expect: rejected("spec.runtime is immutable: the directory lives on its pods"),
      },
      {
        name: "removing spec.runtime is rejected",
        patch: { spec: { runtime: null } },
        expect: rejected("spec.runtime cannot be removed once set"),
      },
      {
        name: "reclaim policy and TTL may change",
        patch: { spec: { reclaimPolicy: "Retain", ttlSecondsAfterUnused: 600 } },
        expect: ACCEPTED,
        check: (o) =>
          expect(asWorkspace(o).spec).toMatchObject({ reclaimPolicy: "Retain", ttlSecondsAfterUnused: 600 }),
      },
      { name: "releasing is accepted", patch: { spec: { released: true } }, expect: ACCEPTED },
      {
        name: "unreleasing is rejected",
        patch: { spec: { released: false } },
        expect: rejected("spec.released cannot be unset once true"),
      },
      {
        name: "removing spec.released is rejected",
        patch: { spec: { released: null } },
        expect: rejected("spec.released cannot be removed once set"),
      },
    ],
  },
  {
    name: "a workspace's status: the controller's fields are accepted, an unknown phase is rejected",
    base: "workspace",
    expect: ACCEPTED,
    updates: [
      {
        name: "a Bound status is accepted",
        subresource: "status",
        patch: {
          status: {
            phase: "Bound",
            runtime: "bash",
            boundPod: "bash-7bc5bf9b64-75l87",
            boundPodUID: "3296df51-0000-0000-0000-000000000000",
            path: "/workspace/runs/workspaces/workspace-3296df51",
            activeRuns: 2,
            lastUsedMicros: 1796245260000000,
          },
        },
        expect: ACCEPTED,
        check: (o) => expect(asWorkspace(o).status?.activeRuns).toBe(2),
      },
      {
        name: "an unknown phase is rejected",
        subresource: "status",
        patch: { status: { phase: "Gone" } },
        expect: rejected('status.phase: Unsupported value: "Gone"'),
      },
      {
        name: "a negative activeRuns is rejected",
        subresource: "status",
        patch: { status: { activeRuns: -1 } },
        expect: rejected("status.activeRuns"),
      },
    ],
  },
  {
    name: "a task naming a workspace is accepted; spec.workspace is immutable",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.workspace = { name: "data" };
    },
    expect: ACCEPTED,
    updates: [
      immutable("workspace", { workspace: { name: "other" } }),
      immutable("workspace", { workspace: null }),
    ],
  },
  {
    name: "a workspace cannot be added to a Run after creation",
    base: "task",
    expect: ACCEPTED,
    updates: [immutable("workspace", { workspace: { name: "data" } })],
  },
  {
    name: "a session naming a workspace is rejected with what to use instead",
    base: "session",
    mutate: (o) => {
      asRun(o).spec.workspace = { name: "data" };
    },
    expect: rejected("session mode takes no spec.workspace", "use a task or function Run"),
  },
  {
    name: "a workspace reference that is not an object name is rejected",
    base: "task",
    mutate: (o) => {
      asRun(o).spec.workspace = { name: "Not_A_Name" };
    },
    expect: rejected("spec.workspace.name"),
  },
];

// ---- the runner --------------------------------------------------------------------------------

async function outcomeOf<T>(what: Promise<T>, expected: Outcome, label: string): Promise<T | undefined> {
  try {
    const result = await what;
    if ("rejected" in expected) {
      throw new Error(
        `${label}: expected rejection containing ${JSON.stringify(expected.rejected)}, but it was accepted`,
      );
    }
    return result;
  } catch (e) {
    if (!(e instanceof KubeError)) throw e;
    if (!("rejected" in expected))
      throw new Error(`${label}: expected acceptance, got HTTP ${e.code}: ${e.message}`);
    const missing = expected.rejected.filter((text) => !e.message.includes(text));
    if (e.code !== 422 || missing.length > 0) {
      throw new Error(
        `${label}: expected HTTP 422 containing ${JSON.stringify(missing)}, got HTTP ${e.code}: ${e.message}`,
      );
    }
    return undefined;
  }
}

suite("Runtime, Run and PersistentWorkspace CRD validation", () => {
  const client: KubeClient = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let counter = 0;

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "crd-validation");
    // The first writes after a CRD is established can miss the new resource: wait until one lands.
    await eventually("Run resource served", () =>
      client.create(path(RunResource, ns.name), { ...bases.session(), metadata: { name: "probe" } }),
    );
  });
  afterAll(async () => {
    await ns?.remove();
  });

  test("short names and plurals collide with no other resource the cluster serves", async () => {
    interface ResourceList {
      resources: { name: string; shortNames?: string[] }[];
    }
    const groups = await client.get<{
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    }>("/apis");
    const lists: [string, ResourceList][] = [["", await client.get<ResourceList>("/api/v1")]];
    for (const g of groups.groups) {
      if (g.name === GROUP) continue;
      lists.push([g.name, await client.get<ResourceList>(`/apis/${g.preferredVersion.groupVersion}`)]);
    }
    const taken = new Map<string, string>();
    for (const [group, list] of lists) {
      for (const r of list.resources)
        for (const n of [r.name, ...(r.shortNames ?? [])]) taken.set(n, `${r.name}.${group}`);
    }
    const ours = crds.flatMap((c) => [
      c.spec.names.plural,
      c.spec.names.singular,
      ...c.spec.names.shortNames,
    ]);
    expect(ours.filter((n) => taken.has(n)).map((n) => `${n} (${taken.get(n)})`)).toEqual([]);
    expect(ours).toContain("rt");
    expect(ours).toContain("krun");
  });

  test("the examples in docs/concepts/api.md do what the page says", async () => {
    const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "concepts", "api.md"), "utf8");
    const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    for (const text of blocks) {
      const obj = YAML.parse(text) as Kind;
      const expected = /^# rejected: (.+)$/m.exec(text);
      const resource = resourceOf(obj);
      await outcomeOf(
        client.create(path(resource, ns.name), obj),
        expected ? rejected(expected[1]!) : ACCEPTED,
        `example ${obj.kind} ${obj.metadata.name}`,
      );
    }
    // The cancel command: `kubectl patch krun <name> --type merge -p '<patch>'`.
    const cancel = /kubectl patch krun (\S+) --type merge -p '(.+)'/.exec(doc);
    expect(cancel).not.toBeNull();
    await client.patch(path(RunResource, ns.name, cancel![1]!), JSON.parse(cancel![2]!), "merge");
    const cancelled = await client.get<Run>(path(RunResource, ns.name, cancel![1]!));
    expect(cancelled.spec.termination?.mode).toBe("Immediate");
  });

  for (const c of [...runtimeCases, ...runCases, ...runUpdateCases, ...workspaceCases]) {
    test(c.name, async () => {
      const obj = bases[c.base]();
      obj.metadata = { name: `case-${++counter}` };
      c.mutate?.(obj);
      const resource = resourceOf(obj);
      const created = await outcomeOf(client.create<Kind>(path(resource, ns.name), obj), c.expect, "create");
      if (!created) return;
      c.check?.(created);
      const name = created.metadata.name!;
      for (const step of c.updates ?? []) {
        const at = resourcePath({ ...resource, namespace: ns.name, name, subresource: step.subresource });
        let write: Promise<unknown>;
        if (step.replace) {
          const current = await client.get<Kind>(path(resource, ns.name, name));
          step.replace(current);
          write = client.replace(at, current);
        } else {
          write = client.patch(at, step.patch, "merge");
        }
        const patched = await outcomeOf(write, step.expect, step.name);
        if (patched && step.check) step.check(await client.get<Kind>(path(resource, ns.name, name)));
      }
    });
  }
});
