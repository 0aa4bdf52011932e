/**
 * krt end to end: the COMPILED binary (built once by krt/build.sh) against the real cluster.
 * Runs do not execute yet (no runtimed here): `--wait` is driven by patching the Run's status.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Annotations, RUN_KIND, type Run, RunResource, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import YAML from "yaml";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { ExitCode } from "../../krt/exit-codes.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { buildKrt, type KrtResult, runKrt } from "./krt-binary.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;
let BIN = "";

function krt(
  args: string[],
  opts: { env?: Record<string, string>; stdin?: string } = {},
): Promise<KrtResult> {
  return runKrt(BIN, args, { kubeconfig: cluster?.kubeconfig ?? "", ...opts });
}

suite("krt CLI (compiled binary)", () => {
  const client = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  /** Adds `-n <ns>` before any `--` (after it, everything is the Run's arguments). */
  const inNs = (...args: string[]) => {
    const dd = args.indexOf("--");
    return dd < 0 ? [...args, "-n", ns.name] : [...args.slice(0, dd), "-n", ns.name, ...args.slice(dd)];
  };

  beforeAll(async () => {
    BIN = await buildKrt();
    await installCrds(client);
    ns = await testNamespace(client, "krt-cli");
    await eventually("Runtime resource served", () =>
      client.create(path(RuntimeResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Runtime",
        metadata: { name: "bash" },
        spec: {
          replicas: 2,
          capacity: { runs: 16 },
          template: {
            spec: { containers: [{ name: "runtime", image: "ghcr.io/kruntimes/runtime-bash:dev" }] },
          },
        },
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await ns?.remove();
  });

  const getRun = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const setStatus = (name: string, status: Run["status"]) =>
    client.patch(path(RunResource, ns.name, name, "status"), { status }, "merge");

  test("krt run creates a task Run with the spec the flags describe", async () => {
    const before = Date.now() * 1000;
    const r = await krt(
      inNs(
        "run",
        "--runtime",
        "bash",
        "--env",
        "A=1",
        "-e",
        "B=x=y",
        "--timeout",
        "30s",
        "--retries",
        "2",
        "--ttl",
        "5m",
        "--",
        "ls",
        "-l",
        "my dir",
      ),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const name = r.stdout.trim();
    expect(name).toMatch(/^bash-[a-z0-9]+$/);
    const run = await getRun(name);
    expect(run.spec).toMatchObject({
      runtime: "bash",
      // The words after -- are one command line, quoted where needed, sent as the inline script.
      mode: { task: {} },
      source: { inline: "ls -l 'my dir'" },
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "x=y" },
      ],
      timeout: "30s",
      retryPolicy: { maxAttempts: 3 },
      ttlSecondsAfterFinished: 300,
    });
    const micros = Number(run.metadata.annotations?.[Annotations.createdMicros]);
    expect(micros).toBeGreaterThanOrEqual(before - 1_000_000);
    expect(micros).toBeLessThanOrEqual(Date.now() * 1000);
  });

  test("krt run --file - sends stdin as the inline script; --entrypoint with args; --name", async () => {
    const script = "#!/bin/bash\necho from stdin\n";
    const a = await krt(inNs("run", "--runtime", "bash", "--file", "-", "--name", "from-stdin"), {
      stdin: script,
    });
    expect(a.code).toBe(0);
    expect(a.stdout.trim()).toBe("from-stdin");
    expect((await getRun("from-stdin")).spec).toMatchObject({
      source: { inline: script },
      mode: { task: {} },
    });

    const file = join(mkdtempSync(join(tmpdir(), "krt-script-")), "s.sh");
    writeFileSync(file, "echo file\n");
    const b = await krt(inNs("run", "--runtime", "bash", "-f", file, "-o", "json"));
    expect(b.code).toBe(0);
    expect((JSON.parse(b.stdout) as Run).spec.source?.inline).toBe("echo file\n");

    const c = await krt(inNs("run", "--runtime", "bash", "--entrypoint", "/opt/job.sh", "--", "--fast", "3"));
    expect(c.code).toBe(0);
    expect((await getRun(c.stdout.trim())).spec.mode).toEqual({
      task: { entrypoint: "/opt/job.sh", args: ["--fast", "3"] },
    });
  });

  test("bad flag combinations exit 64 with a message that says what to do", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["run", "--runtime", "bash", "--file", "-", "--entrypoint", "/x.sh"],
        /--file and --entrypoint exclude each other/,
      ],
      [["run", "--runtime", "bash", "--file", "-", "--", "arg"], /--file takes no arguments/],
      [["run", "--runtime", "bash"], /nothing to run/],
      [["run", "--", "echo"], /--runtime is required[\s\S]*krt runtime list/],
      [["run", "--runtime", "bash", "--env", "NOEQUALS", "--", "x"], /--env "NOEQUALS" is not NAME=VALUE/],
      [["run", "--runtime", "bash", "--timeout", "soon", "--", "x"], /--timeout "soon" is not a duration/],
      [["run", "--runtime", "bash", "--retries", "12", "--", "x"], /--retries "12"/],
      [["get", "x", "-A"], /-A\/--all-namespaces does not apply/],
      [["list", "-A", "-n", "x"], /exclude each other/],
      [["list", "-o", "xml"], /unknown output format "xml"/],
      [["list", "--bogus"], /^error: krt list: unknown option "--bogus"\nhint: see `krt list --help`\n$/],
      [["run", "--runtime", "bash", "--follow", "-o", "json", "--", "x"], /--follow prints the Run's output/],
      [
        ["run", "--runtime", "bash", "--wait-timeout", "5s", "--", "x"],
        /--wait-timeout needs --wait or --follow/,
      ],
      [["logs", "x", "--attempt", "0"], /--attempt "0" must be a whole number from 1/],
      [["logs", "x", "-A"], /-A\/--all-namespaces does not apply/],
    ];
    for (const [args, message] of cases) {
      const r = await krt(args);
      expect({ args, code: r.code }).toEqual({ args, code: ExitCode.Usage });
      expect(r.stderr).toMatch(message);
    }
  });

  test("a missing Runtime is reported with a hint to krt runtime list", async () => {
    const r = await krt(inNs("run", "--runtime", "nope", "--", "true"));
    expect(r.code).toBe(ExitCode.NotFound);
    expect(r.stderr).toContain('runtime "nope" not found');
    expect(r.stderr).toContain("krt runtime list");
  });

  test("krt get / list / describe in every output format", async () => {
    const name = "shown";
    expect((await krt(inNs("run", "--runtime", "bash", "--name", name, "--", "echo"))).code).toBe(0);
    await setStatus(name, {
      phase: "Succeeded",
      exitCode: 0,
      attempt: 1,
      timing: {
        createdMicros: 1_000_000,
        scheduledMicros: 1_002_500,
        startedMicros: 1_003_000,
        finishedMicros: 1_053_000,
      },
    });

    const table = await krt(inNs("get", name));
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+RUNTIME\s+MODE\s+PHASE/);
    expect(table.stdout).toMatch(new RegExp(`${name}\\s+bash\\s+task\\s+Succeeded\\s+0\\s+1`));
    expect(JSON.parse((await krt(inNs("get", name, "-o", "json"))).stdout).metadata.name).toBe(name);
    expect((YAML.parse((await krt(inNs("get", name, "-o", "yaml"))).stdout) as Run).kind).toBe(RUN_KIND);
    expect((await krt(inNs("get", name, "-o", "name"))).stdout).toBe(`${name}\n`);
    expect((await krt(inNs("get", name, "-o", "wide"))).stdout).toContain("DURATION");
    const missing = await krt(inNs("get", "no-such-run"));
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toContain('run "no-such-run" not found');

    const names = (await krt(inNs("list", "-o", "name"))).stdout.trim().split("\n");
    expect(names).toContain(name);
    expect(names).toContain("from-stdin");
    expect((await krt(inNs("list", "--phase", "succeeded", "-o", "name"))).stdout.trim()).toBe(name);
    // No controller runs here: the other Runs have no status yet, which is what Pending means.
    const pending = (await krt(inNs("list", "--phase", "pending", "-o", "name"))).stdout.trim().split("\n");
    expect(pending).toContain("from-stdin");
    expect(pending).not.toContain(name);
    expect(
      (await krt(inNs("list", "--runtime", "bash", "--phase", "Succeeded", "-o", "name"))).stdout.trim(),
    ).toBe(name);
    const listJson = JSON.parse((await krt(inNs("list", "--runtime", "bash", "-o", "json"))).stdout);
    expect(listJson.kind).toBe("List");
    expect(listJson.items.length).toBe(names.length);
    expect(
      (YAML.parse((await krt(inNs("list", "-o", "yaml"))).stdout) as { items: Run[] }).items.length,
    ).toBe(names.length);
    const all = await krt(["list", "-A"]);
    expect(all.stdout).toMatch(new RegExp(`${ns.name}\\s+${name}\\s`));
    const none = await krt(inNs("list", "--runtime", "python"));
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("No Runs found");

    const d = await krt(inNs("describe", name));
    expect(d.code).toBe(0);
    expect(d.stdout).toContain("Phase:");
    expect(d.stdout).toMatch(/schedule \(sch−cre\):\s+2\.50ms/);
    expect(d.stdout).toMatch(/start \(sta−sch\):\s+500µs/);
    expect(d.stdout).toMatch(/execute \(fin−sta\):\s+50\.0ms/);
    expect(d.stdout).toContain("Events:");
    expect(JSON.parse((await krt(inNs("describe", name, "-o", "json"))).stdout).spec.runtime).toBe("bash");
    expect((await krt(inNs("describe", name, "-o", "name"))).stdout.trim()).toBe(name);
    expect((YAML.parse((await krt(inNs("describe", name, "-o", "yaml"))).stdout) as Run).metadata.name).toBe(
      name,
    );
  });

  test("krt run --wait follows the Run by watch and exits with its exit code", async () => {
    const waitFor = async (name: string, status: Run["status"], args: string[] = []) => {
      const proc = krt(inNs("run", "--runtime", "bash", "--name", name, "--wait", ...args, "--", "true"));
      await eventually(`run ${name} created`, () => getRun(name).catch(() => undefined));
      await Bun.sleep(300);
      await setStatus(name, { phase: "Running", attempt: 1 });
      await Bun.sleep(100);
      await setStatus(name, status);
      return proc;
    };
    const ok = await waitFor("wait-ok", {
      phase: "Succeeded",
      exitCode: 0,
      stdoutTail: "hi\n",
      stderrTail: "careful\n",
      stdoutTruncated: true,
    });
    expect(ok.code).toBe(0);
    // Like docker run: the task's output on stdout/stderr; the name and the summary on stderr.
    expect(ok.stdout).toBe("hi\n");
    expect(ok.stderr).toStartWith("run wait-ok created\ncareful\n(only the end of the output is kept");
    expect(ok.stderr).toContain("`krt logs wait-ok` shows all of it)\nrun wait-ok: Succeeded");
    // With -o the created Run is printed as asked, and no output.
    const named = await waitFor("wait-named", { phase: "Succeeded", exitCode: 0, stdoutTail: "x\n" }, [
      "-o",
      "name",
    ]);
    expect(named.stdout).toBe("wait-named\n");
    const failed = await waitFor("wait-failed", { phase: "Failed", exitCode: 3, reason: "NonZeroExit" });
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain("exit code 3");
    const cancelled = await waitFor("wait-cancelled", { phase: "Cancelled" });
    expect(cancelled.code).toBe(ExitCode.RunCancelled);
    const timeout = await waitFor("wait-timeout", { phase: "Timeout" });
    expect(timeout.code).toBe(ExitCode.RunTimeout);

    const w = await krt(inNs("wait", "wait-failed"));
    expect(w.code).toBe(3);
    const never = await krt(inNs("wait", "from-stdin", "--timeout", "500ms"));
    expect(never.code).toBe(ExitCode.WaitTimeout);
    expect(never.stderr).toContain("krt cancel from-stdin");
  }, 30_000);

  test("krt cancel sets termination Immediate; krt delete removes Runs", async () => {
    const c = await krt(inNs("cancel", "from-stdin"));
    expect(c.code).toBe(0);
    expect((await getRun("from-stdin")).spec.termination).toEqual({ mode: "Immediate" });
    const done = await krt(inNs("cancel", "wait-ok"));
    expect(done.code).toBe(0);
    expect(done.stderr).toContain("already ended");

    const d = await krt(inNs("delete", "from-stdin", "wait-ok"));
    expect(d.code).toBe(0);
    expect(d.stdout).toContain("run from-stdin deleted");
    await eventually(
      "runs deleted",
      async () => (await getRun("from-stdin").catch((e) => e)) instanceof KubeError,
    );
    const again = await krt(inNs("delete", "from-stdin"));
    expect(again.code).toBe(ExitCode.NotFound);
    expect((await krt(inNs("delete", "from-stdin", "--ignore-not-found"))).code).toBe(0);
  });

  test("krt runtime list/get show desired vs ready replicas and capacity", async () => {
    await client.patch(
      path(RuntimeResource, ns.name, "bash", "status"),
      {
        status: { replicas: 2, readyReplicas: 1, availableReplicas: 1 },
      },
      "merge",
    );
    const l = await krt(inNs("runtime", "list"));
    expect(l.code).toBe(0);
    expect(l.stdout).toMatch(/^NAME\s+DESIRED\s+READY\s+AVAILABLE\s+CAPACITY\s+PENDING\s+AGE/);
    expect(l.stdout).toMatch(/bash\s+2\s+1\s+1\s+runs=16\s/);
    expect(JSON.parse((await krt(inNs("runtime", "get", "bash", "-o", "json"))).stdout).spec.replicas).toBe(
      2,
    );
    expect((await krt(inNs("runtime", "list", "-o", "name"))).stdout).toBe("bash\n");
    const missing = await krt(inNs("runtime", "get", "nope"));
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toContain("krt runtime list");
  });

  test("krt version prints the embedded build info and the server version", async () => {
    const v = await krt(["version", "-o", "json"]);
    expect(v.code).toBe(0);
    const data = JSON.parse(v.stdout);
    expect(data.client.version).toBe("0.1.0");
    expect(data.client.commit).toMatch(/^[0-9a-f]{7,}/);
    expect(Date.parse(data.client.buildTime)).toBeGreaterThan(0);
    expect(data.server.version).toMatch(/^v1\./);
    const bogus = await krt(["version"], { env: { KUBECONFIG: "/nonexistent/kubeconfig" } });
    expect(bogus.code).toBe(0);
    expect(bogus.stdout).toContain("server: unavailable");
  });

  test("no cluster: a missing kubeconfig or an unreachable server is a clear error and exit code", async () => {
    const missing = await krt(["list"], { env: { KUBECONFIG: "/nonexistent/kubeconfig" } });
    expect(missing.code).toBe(ExitCode.Config);
    expect(missing.stderr).toContain("kubeconfig /nonexistent/kubeconfig does not exist");

    const dir = mkdtempSync(join(tmpdir(), "krt-bogus-"));
    const kc = join(dir, "kubeconfig");
    writeFileSync(
      kc,
      YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "dead",
        contexts: [{ name: "dead", context: { cluster: "dead", user: "u" } }],
        clusters: [{ name: "dead", cluster: { server: "https://127.0.0.1:1" } }],
        users: [{ name: "u", user: { token: "x" } }],
      }),
    );
    const dead = await krt(["list"], { env: { KUBECONFIG: kc } });
    expect(dead.code).toBe(ExitCode.Unavailable);
    expect(dead.stderr).toBe(
      `error: cannot reach the Kubernetes API server https://127.0.0.1:1 (context "dead" of ${kc}): connection refused\n` +
        "hint: check that the cluster is running and reachable from here (`kubectl cluster-info`), or choose another with --context / --kubeconfig (KUBECONFIG)\n",
    );
  });

  test("--context picks a kubeconfig context; its namespace is the default, -n overrides it", async () => {
    const kc = YAML.parse(await Bun.file(cluster?.kubeconfig ?? "").text()) as {
      "current-context": string;
      contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
      clusters: { name: string; cluster: Record<string, unknown> }[];
    };
    const good = kc["current-context"];
    const goodCtx = kc.contexts.find((c) => c.name === good);
    if (!goodCtx) throw new Error(`no context ${good} in the test kubeconfig`);
    const multi = {
      ...kc,
      "current-context": "dead",
      clusters: [...kc.clusters, { name: "dead", cluster: { server: "https://127.0.0.1:1" } }],
      contexts: [
        { name: "dead", context: { ...goodCtx.context, cluster: "dead" } },
        { name: "here", context: { ...goodCtx.context, namespace: ns.name } },
      ],
    };
    const file = join(mkdtempSync(join(tmpdir(), "krt-ctx-")), "kubeconfig");
    writeFileSync(file, YAML.stringify(multi));
    const env = { KUBECONFIG: file };
    const dead = await krt(["list"], { env });
    expect(dead.code).toBe(ExitCode.Unavailable);
    const here = await krt(["list", "--context", "here", "-o", "name"], { env });
    expect(here.code).toBe(0);
    expect(here.stdout).toContain("shown\n");
    const other = await krt(["list", "--context", "here", "-n", "default", "-o", "name"], { env });
    expect(other.code).toBe(0);
    expect(other.stdout).not.toContain("shown\n");
    const viaFlag = await krt(["list", "--kubeconfig", file, "--context", "here", "-o", "name"], {
      env: { KUBECONFIG: "/nonexistent" },
    });
    expect(viaFlag.stdout).toBe(here.stdout);
    const missing = await krt(["list", "--context", "nope"], { env });
    expect(missing.code).toBe(ExitCode.Config);
    expect(missing.stderr).toContain("nope");
  });

  test.if(Boolean(cluster?.local))(
    "403: the error names the verb and resource that were denied",
    async () => {
      const env = { KUBECONFIG: cluster?.local?.nobodyKubeconfig ?? "" };
      const list = await krt(["list", "-n", ns.name], { env });
      expect(list.code).toBe(ExitCode.Forbidden);
      expect(list.stderr).toContain(
        `forbidden: you may not list runs.kruntimes.io in namespace "${ns.name}"`,
      );
      const run = await krt(["run", "-n", ns.name, "--runtime", "bash", "--", "true"], { env });
      expect(run.code).toBe(ExitCode.Forbidden);
      expect(run.stderr).toContain("you may not create runs.kruntimes.io");
    },
  );

  test("krt completion prints bash and zsh scripts", async () => {
    const bash = await krt(["completion", "bash"]);
    expect(bash.code).toBe(0);
    expect(bash.stdout).toContain("complete -F _krt krt");
    expect(bash.stdout).toContain('"runtime list")');
    expect((await krt(["completion", "zsh"])).stdout).toContain("#compdef krt");
    expect((await krt(["completion", "fish"])).code).toBe(ExitCode.Usage);
  });

  test("the bash completion completes commands, flags and Run names in bash itself", async () => {
    const script = join(mkdtempSync(join(tmpdir(), "krt-compl-")), "krt.bash");
    writeFileSync(script, (await krt(["completion", "bash"])).stdout);
    const complete = (words: string[]) => {
      const line = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _krt; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const p = Bun.spawnSync(["bash", "-c", line], {
        env: {
          PATH: `${dirname(BIN)}:${process.env.PATH ?? ""}`,
          HOME: tmpdir(),
          KUBECONFIG: cluster?.kubeconfig ?? "",
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      return p.stdout.toString().trim().split("\n").filter(Boolean).sort();
    };
    expect(complete(["krt", "lo"])).toEqual(["logs"]);
    expect(complete(["krt", "runtime", "l"])).toEqual(["list"]);
    expect(complete(["krt", "artifact", "d"])).toEqual(["download"]);
    expect(complete(["krt", "bench", "--scen"])).toEqual(["--scenario"]);
    expect(complete(["krt", "logs", "--att"])).toEqual(["--attempt"]);
    // Run names come from `krt list -o name`, in the namespace the command line names.
    const inNs = (await krt(["list", "-n", ns.name, "-o", "name"])).stdout.split("\n").filter(Boolean).sort();
    expect(inNs).toContain("shown");
    expect(complete(["krt", "logs", "-n", ns.name, ""])).toEqual(inNs);
    expect(complete(["krt", "describe", "--namespace", ns.name, "sh"])).toEqual(["shown"]);
  });
});
