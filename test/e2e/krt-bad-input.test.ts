/**
 * krt given bad input: wrong flags, missing and malformed files, broken kubeconfigs, an unreachable
 * server, a certificate that does not verify, a token the apiserver rejects (invalid, expired) and
 * one it accepts but RBAC forbids. Every case must print one `error:` line (and at most one
 * `hint:` line), no stack trace, nothing on stdout, and exit with the code docs/cli.md documents.
 * The credentials are real: a ServiceAccount token from the TokenRequest API, and the same token
 * re-signed with the cluster's service-account key and an expiry in the past.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPrivateKey, createSign } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ClusterConnection, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import { ExitCode } from "../../krt/exit-codes.ts";
import { testCluster, testNamespace } from "../support/cluster.ts";
import { buildKrt, type KrtResult, runKrt } from "./krt-binary.ts";

const cluster = testCluster();
if (!cluster) console.warn("krt-bad-input: skipped because KUBECONFIG is unset");
const suite = cluster ? describe : describe.skip;

/** A kubeconfig for `conn`'s server with the given user and CA. */
function kubeconfig(dir: string, name: string, server: string, user: object, ca?: string): string {
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    YAML.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": name,
      contexts: [{ name, context: { cluster: name, user: name, namespace: "default" } }],
      clusters: [
        {
          name,
          cluster: {
            server,
            ...(ca ? { "certificate-authority-data": Buffer.from(ca).toString("base64") } : {}),
          },
        },
      ],
      users: [{ name, user }],
    }),
  );
  return file;
}

/** The token with its claims changed, signed again with the cluster's service-account key. */
function resign(token: string, keyPem: string, claims: Record<string, unknown>): string {
  const [header, payload] = token.split(".") as [string, string];
  const body = { ...JSON.parse(Buffer.from(payload, "base64url").toString()), ...claims };
  const signingInput = `${header}.${Buffer.from(JSON.stringify(body)).toString("base64url")}`;
  const key = createPrivateKey(keyPem);
  const signature = createSign("SHA256")
    .update(signingInput)
    .sign({ key, dsaEncoding: "ieee-p1363" })
    .toString("base64url");
  return `${signingInput}.${signature}`;
}

interface Case {
  name: string;
  args: string[];
  /** Which kubeconfig (a key of `configs`, or a path). */
  config?: string;
  code: number;
  /** The error line, exactly (after `error: `), or a pattern. */
  error: string | RegExp;
  /** The hint line, exactly, when there must be one. */
  hint?: string | RegExp;
}

suite("krt bad input: one error line, the documented exit code, no stack trace", () => {
  const admin = cluster?.kubeconfig as string;
  const conn = cluster ? loadKubeconfigFile(admin) : ({} as ClusterConnection);
  const dir = mkdtempSync(join(tmpdir(), "krt-bad-input-"));
  const configs: Record<string, string> = { admin };
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let bin: string;

  beforeAll(async () => {
    const client = cluster!.client;
    bin = await buildKrt();
    ns = await testNamespace(client, "krt-bad-input");
    // A ServiceAccount with no Role: authenticated, forbidden everything kruntimes serves.
    await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: "nobody" } });
    const { status } = await client.create<{ status: { token: string } }>(
      `${path(R.serviceAccounts, ns.name, "nobody")}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } },
    );
    configs.forbidden = kubeconfig(dir, "forbidden", conn.server, { token: status.token }, conn.ca);
    configs.badToken = kubeconfig(dir, "bad-token", conn.server, { token: "not-a-token" }, conn.ca);
    const saKey = process.env.KRT_CLUSTER_DIR && join(process.env.KRT_CLUSTER_DIR, "pki", "sa.key");
    if (saKey && existsSync(saKey)) {
      const now = Math.floor(Date.now() / 1000);
      const expired = resign(status.token, readFileSync(saKey, "utf8"), {
        iat: now - 7200,
        nbf: now - 7200,
        exp: now - 3600,
      });
      configs.expired = kubeconfig(dir, "expired", conn.server, { token: expired }, conn.ca);
    }
    const caKey = process.env.KRT_CLUSTER_DIR && join(process.env.KRT_CLUSTER_DIR, "pki", "ca.key");
    if (caKey && existsSync(caKey)) {
      // A client certificate the cluster's CA signed, valid only in 2020 (`openssl ca` sets the dates).
      const openssl = (args: string[]) => {
        const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stderr: "pipe" });
        if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`);
      };
      writeFileSync(
        join(dir, "ca.cnf"),
        "[ca]\ndefault_ca=x\n[x]\ndatabase=index\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n",
      );
      writeFileSync(join(dir, "index"), "");
      writeFileSync(join(dir, "serial"), "01\n");
      openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "old.key"]);
      openssl(["req", "-new", "-key", "old.key", "-subj", "/CN=krt-bad-input-old", "-out", "old.csr"]);
      openssl([
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-cert",
        join(dirname(caKey), "ca.crt"),
        "-keyfile",
        caKey,
        "-in",
        "old.csr",
        "-out",
        "old.crt",
        "-startdate",
        "20200101000000Z",
        "-enddate",
        "20200102000000Z",
        "-notext",
      ]);
      configs.expiredCert = kubeconfig(
        dir,
        "expired-cert",
        conn.server,
        {
          "client-certificate-data": readFileSync(join(dir, "old.crt")).toString("base64"),
          "client-key-data": readFileSync(join(dir, "old.key")).toString("base64"),
        },
        conn.ca,
      );
    }
    configs.unreachable = kubeconfig(dir, "unreachable", "https://127.0.0.1:1", { token: "x" }, conn.ca);
    // A CA that did not sign the apiserver's certificate: a self-signed one of our own.
    const other = Bun.spawnSync([
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      join(dir, "other-ca.key"),
      "-subj",
      "/CN=not-the-cluster-ca",
      "-days",
      "1",
    ]);
    configs.wrongCa = kubeconfig(dir, "wrong-ca", conn.server, { token: "x" }, other.stdout.toString());
    writeFileSync(join(dir, "garbage.kubeconfig"), "apiVersion: v1\nclusters: [ {{{\n");
    configs.garbage = join(dir, "garbage.kubeconfig");
    writeFileSync(join(dir, "no-context.kubeconfig"), "apiVersion: v1\nkind: Config\nclusters: []\n");
    configs.noContext = join(dir, "no-context.kubeconfig");
    writeFileSync(join(dir, "bad.yaml"), "kind: Run\nspec: [\n");
    writeFileSync(join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: { name: x }\n");
  });
  afterAll(async () => {
    await ns?.remove();
  });

  const EXPIRED_OR_INVALID =
    "check the user of your kubeconfig context; the token or certificate may have expired";
  const cases = (): Case[] => [
    // ---- flags and arguments (64)
    {
      name: "an unknown global flag",
      args: ["--bogus"],
      code: 64,
      error: 'krt: unknown option "--bogus"',
      hint: "see `krt --help`",
    },
    {
      name: "an unknown flag of a command",
      args: ["run", "--no-such-flag"],
      code: 64,
      error: 'krt run: unknown option "--no-such-flag"',
      hint: "see `krt run --help`",
    },
    {
      name: "a flag without its value",
      args: ["run", "--timeout"],
      code: 64,
      error: "krt run: --timeout needs a value",
      hint: "see `krt run --help`",
    },
    {
      name: "a missing argument",
      args: ["get"],
      code: 64,
      error: "krt get: missing argument <run>",
      hint: "usage: krt get <run>; see `krt get --help`",
    },
    {
      name: "an extra argument",
      args: ["describe", "a", "b"],
      code: 64,
      error: 'krt describe: unexpected argument "b"',
      hint: "usage: krt describe <run>; see `krt describe --help`",
    },
    {
      name: "an unknown command",
      args: ["deploy"],
      code: 64,
      error: 'unknown command "krt deploy"',
      hint: "see `krt --help` for the commands",
    },
    {
      name: "a command group without its subcommand",
      args: ["session"],
      code: 64,
      error: '"krt session" needs a subcommand: create, close',
      hint: "e.g. `krt session create --help`",
    },
    {
      name: "krt run without --runtime",
      args: ["run", "--", "echo", "hi"],
      code: 64,
      error: "--runtime is required",
      hint: "list the Runtimes with `krt runtime list`",
    },
    {
      name: "a timeout that is not a duration",
      args: ["run", "-r", "bash", "--timeout", "banana", "--", "echo"],
      code: 64,
      error: '--timeout "banana" is not a duration',
      hint: "e.g. --timeout 30s, 5m, 1h30m",
    },
    {
      name: "an env flag without =",
      args: ["run", "-r", "bash", "-e", "NOEQUALS", "--", "echo"],
      code: 64,
      error: '--env "NOEQUALS" is not NAME=VALUE',
      hint: "e.g. --env GREETING=hello (repeat --env for more)",
    },
    {
      name: "an unknown output format",
      args: ["list", "-o", "yamlx"],
      code: 64,
      error: 'unknown output format "yamlx"',
      hint: "use -o table|wide|json|yaml|name",
    },
    {
      name: "-A on a one-object command",
      args: ["get", "x", "-A"],
      code: 64,
      error: '-A/--all-namespaces does not apply to "krt get"',
      hint: "use -n <namespace>",
    },
    // ---- files (64)
    {
      name: "a script file that does not exist",
      args: ["run", "-r", "bash", "--file", join(dir, "nope.sh")],
      code: 64,
      error: `--file ${join(dir, "nope.sh")}: cannot read it: no such file`,
      hint: /^check the path/,
    },
    {
      name: "a script file that is a directory",
      args: ["run", "-r", "bash", "--file", dir],
      code: 64,
      error: `--file ${dir}: cannot read it: it is a directory`,
      hint: /^check the path/,
    },
    {
      name: "a manifest that does not exist",
      args: ["run", "--manifest", join(dir, "nope.yaml")],
      code: 64,
      error: `--manifest ${join(dir, "nope.yaml")}: cannot read it: no such file`,
      hint: /^check the path/,
    },
    {
      name: "a manifest that is not YAML",
      args: ["run", "--manifest", join(dir, "bad.yaml")],
      code: 64,
      error: `--manifest ${join(dir, "bad.yaml")}: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1`,
      hint: "check the indentation and brackets at that line",
    },
    {
      name: "a manifest that is not a Run",
      args: ["run", "--manifest", join(dir, "pod.yaml")],
      code: 64,
      error: `--manifest ${join(dir, "pod.yaml")}: not a Run (want apiVersion kruntimes.io/v1alpha1, kind Run)`,
    },
    // ---- kubeconfig (78)
    {
      name: "a kubeconfig that does not exist",
      args: ["list"],
      config: join(dir, "none.kubeconfig"),
      code: ExitCode.Config,
      error: `kubeconfig ${join(dir, "none.kubeconfig")} does not exist; set KUBECONFIG or pass --kubeconfig`,
    },
    {
      name: "a kubeconfig that is not YAML",
      args: ["list"],
      config: "garbage",
      code: ExitCode.Config,
      error: `kubeconfig ${join(dir, "garbage.kubeconfig")} is not valid YAML: Flow map in block collection must be sufficiently indented and end with a } at line 3, column 1`,
    },
    {
      name: "a kubeconfig without a current context",
      args: ["list"],
      config: "noContext",
      code: ExitCode.Config,
      error: `kubeconfig ${join(dir, "no-context.kubeconfig")} has no current-context; pass --context`,
    },
    {
      name: "a context that is not in the kubeconfig",
      args: ["list", "--context", "nosuch"],
      code: ExitCode.Config,
      error: `context "nosuch" is not in ${admin}`,
    },
    // ---- the server (69, 77)
    {
      name: "an unreachable server",
      args: ["list"],
      config: "unreachable",
      code: ExitCode.Unavailable,
      error: `cannot reach the Kubernetes API server https://127.0.0.1:1 (context "unreachable" of ${join(dir, "unreachable.kubeconfig")}): connection refused`,
      hint: /^check that the cluster is running/,
    },
    {
      name: "a server whose certificate the kubeconfig's CA did not sign",
      args: ["list"],
      config: "wrongCa",
      code: ExitCode.Unavailable,
      error: new RegExp(
        `^cannot reach the Kubernetes API server ${conn.server?.replace(/[.]/g, "\\.")} \\(context "wrong-ca" of .*\\): its TLS certificate does not verify \\(`,
      ),
      hint: "the kubeconfig's certificate-authority may belong to another cluster; check the cluster entry of that context",
    },
    {
      name: "a token the apiserver rejects (401)",
      args: ["list", "-n", "default"],
      config: "badToken",
      code: ExitCode.Forbidden,
      error:
        'not authenticated: the API server refused the credentials (list runs.kruntimes.io in namespace "default")',
      hint: EXPIRED_OR_INVALID,
    },
    {
      name: "an expired ServiceAccount token (401)",
      args: ["run", "-r", "bash", "-n", "default", "--", "echo"],
      config: "expired",
      code: ExitCode.Forbidden,
      error:
        'not authenticated: the API server refused the credentials (get runtimes.kruntimes.io "bash" in namespace "default")',
      hint: EXPIRED_OR_INVALID,
    },
    {
      name: "an expired client certificate (401)",
      args: ["list", "-n", "default"],
      config: "expiredCert",
      code: ExitCode.Forbidden,
      error:
        'not authenticated: the API server refused the credentials (list runs.kruntimes.io in namespace "default")',
      hint: EXPIRED_OR_INVALID,
    },
    {
      name: "a user RBAC does not allow to list Runs (403)",
      args: ["list", "-n", "default"],
      config: "forbidden",
      code: ExitCode.Forbidden,
      error:
        /^forbidden: you may not list runs\.kruntimes\.io in namespace "default": runs\.kruntimes\.io is forbidden: User "system:serviceaccount:krt-bad-input-[a-z0-9]+:nobody" cannot list resource "runs" in API group "kruntimes\.io" in the namespace "default"$/,
      hint: "ask a cluster admin for a Role granting that verb on that resource, or use another --context",
    },
    {
      name: "a user RBAC does not allow to cancel a Run (403)",
      args: ["cancel", "x", "-n", "default"],
      config: "forbidden",
      code: ExitCode.Forbidden,
      error: /^forbidden: you may not (get|patch) runs\.kruntimes\.io "x" in namespace "default": /,
      hint: "ask a cluster admin for a Role granting that verb on that resource, or use another --context",
    },
  ];

  // The table is built after beforeAll (it names files made there); one test per row.
  const names = cases().map((c) => c.name);
  for (const [i, name] of names.entries()) {
    test(name, async () => {
      const c = cases()[i]!;
      if ((c.config === "expired" || c.config === "expiredCert") && !configs[c.config]) {
        console.warn(`krt-bad-input: "${c.name}" needs the local cluster's keys (KRT_CLUSTER_DIR/pki)`);
        return;
      }
      const kc = c.config ? (configs[c.config] ?? c.config) : admin;
      const r: KrtResult = await runKrt(bin, c.args, { kubeconfig: kc, stdin: "" });
      const lines = r.stderr.split("\n").filter(Boolean);
      const label = `krt ${c.args.join(" ")}\n${r.stderr}`;
      expect(r.stdout, label).toBe("");
      expect(
        lines.some((l) => /^\s+at /.test(l)),
        label,
      ).toBe(false);
      expect(lines[0]?.startsWith("error: "), label).toBe(true);
      const err = lines[0]!.slice("error: ".length);
      if (typeof c.error === "string") expect(err).toBe(c.error);
      else expect(err).toMatch(c.error);
      expect(lines.length, label).toBeLessThanOrEqual(2);
      if (c.hint !== undefined) {
        const hint = (lines[1] ?? "").replace(/^hint: /, "");
        if (typeof c.hint === "string") expect(hint).toBe(c.hint);
        else expect(hint).toMatch(c.hint);
      }
      expect(r.code, label).toBe(c.code);
    });
  }

  test("every exit code the table expects is in the documented table, and docs/cli.md names them", () => {
    const docs = join(import.meta.dir, "..", "..", "docs");
    const table = readFileSync(join(docs, "cli-reference.md"), "utf8");
    const guide = readFileSync(join(docs, "cli.md"), "utf8");
    for (const code of new Set(cases().map((c) => c.code))) {
      expect(table).toMatch(new RegExp(`^\\| ${code} +\\|`, "m"));
      expect(guide).toContain(`| ${code} `);
    }
  });
});
