/**
 * `krt invoke` as users run it: the COMPILED binary against a stand-in of the gateway's public API
 * (krt/gateway/testing/standin-gateway.ts, strict TLS with a test CA). Covers the body sources
 * (--data, @file, stdin), headers and content type, -i and -o json, where the token comes from
 * (kubeconfig, --token, the client-certificate explanation), --gateway and $KRT_GATEWAY, TLS
 * verification (--ca-file, --insecure-skip-tls-verify), and the exit code of every gateway error
 * class. No cluster needed: with --gateway and --ca-file krt asks the apiserver nothing.
 * The full path (chart, real gateway, real function Runs, discovery) is krt-functions.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { makeTestPki } from "../../gateway/testing/tls.ts";
import { ExitCode } from "../../krt/exit-codes.ts";
import { type StandinGateway, startStandinGateway } from "../../krt/gateway/testing/standin-gateway.ts";
import { buildKrt, type KrtResult, runKrt } from "./krt-binary.ts";

const TOKEN = "e2e-token";
const dir = mkdtempSync(join(tmpdir(), "krt-invoke-"));
let BIN = "";
let gw: StandinGateway;
let caFile = "";

/** A kubeconfig whose apiserver is never reached (port 1): krt must not need it here. */
function kubeconfig(user: Record<string, string>): string {
  const file = join(dir, `kubeconfig-${Object.keys(user).join("-") || "none"}`);
  writeFileSync(
    file,
    YAML.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u", namespace: "team" } }],
      "current-context": "c",
    }),
  );
  return file;
}

let tokenConfig = "";
let certConfig = "";

function krt(
  args: string[],
  opts: { kubeconfig?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<KrtResult> {
  return runKrt(BIN, ["invoke", ...args], {
    kubeconfig: opts.kubeconfig ?? tokenConfig,
    ...(opts.env ? { env: opts.env } : {}),
    stdin: opts.stdin ?? "",
  });
}
const via = () => ["--gateway", gw.url, "--ca-file", caFile];

describe("krt invoke (compiled binary, stand-in gateway)", () => {
  beforeAll(async () => {
    BIN = await buildKrt();
    const pki = makeTestPki({ dns: ["localhost"], ips: ["127.0.0.1"] });
    caFile = pki.caFile;
    gw = startStandinGateway({
      hostname: "127.0.0.1",
      cert: readFileSync(pki.certFile, "utf8"),
      key: readFileSync(pki.keyFile, "utf8"),
      token: TOKEN,
    });
    tokenConfig = kubeconfig({ token: TOKEN });
    const cert = readFileSync(pki.certFile, "utf8");
    const key = readFileSync(pki.keyFile, "utf8");
    certConfig = kubeconfig({
      "client-certificate-data": Buffer.from(cert).toString("base64"),
      "client-key-data": Buffer.from(key).toString("base64"),
    });
  }, 120_000);
  afterAll(() => gw?.stop());

  test("prints the response body as it is; the kubeconfig's token and namespace are used", async () => {
    const r = await krt(["echo", "-d", '{"name":"krt"}', ...via()]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"name":"krt"}');
  });

  test("-i prints the handler's status and headers first; content type guessed or from -H", async () => {
    const json = await krt(["echo", "-i", "-d", "[1,2]", "-H", "X-Trace: t1", ...via()]);
    expect(json.code).toBe(0);
    const [head, body] = json.stdout.split("\n\n");
    expect(head?.split("\n")).toEqual([
      "status: 200",
      "content-type: application/json",
      "x-namespace: team",
      "x-trace: t1",
      "x-kruntimes-invocation-id: inv-1",
      "x-kruntimes-duration-micros: 42",
    ]);
    expect(body).toBe("[1,2]");
    const csv = await krt(["echo", "-i", "-d", "a,b", "-H", "content-type: text/csv", ...via()]);
    expect(csv.stdout).toContain("content-type: text/csv\n");
    const bytes = await krt(["echo", "-i", "-d", "not json", ...via()]);
    expect(bytes.stdout).toContain("content-type: application/octet-stream\n");
  });

  test("the body from @file, @- and piped stdin; -o json prints the whole response", async () => {
    const file = join(dir, "body.json");
    writeFileSync(file, '{"from":"file"}');
    expect((await krt(["echo", "--data", `@${file}`, ...via()])).stdout).toBe('{"from":"file"}');
    expect((await krt(["echo", "-d", "@-", ...via()], { stdin: "dash" })).stdout).toBe("dash");
    expect((await krt(["echo", ...via()], { stdin: "piped" })).stdout).toBe("piped");
    const out = await krt(["echo", "-d", "hi", "-o", "json", ...via()]);
    expect(JSON.parse(out.stdout)).toEqual({
      status: 200,
      contentType: "application/octet-stream",
      headers: { "x-namespace": "team" },
      invocationId: "inv-1",
      durationMicros: 42,
      body: "hi",
    });
    const missing = await krt(["echo", "-d", "@/nonexistent/body", ...via()]);
    expect(missing.code).toBe(ExitCode.Usage);
    expect(missing.stderr).toContain("--data @/nonexistent/body: cannot read it");
  });

  test("a handler's own status is not an error: exit 0, status shown with -i", async () => {
    const r = await krt(["teapot", "-i", ...via()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("status: 418\n");
    expect(r.stdout).toEndWith("\n\nshort and stout");
  });

  test("a handler error: exit 84, the structured error on stderr, nothing on stdout", async () => {
    const r = await krt(["boom", "-d", "{}", ...via()]);
    expect(r.code).toBe(ExitCode.HandlerError);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("error: handler error: ValueError: bad input\n");
    expect(r.stderr).toContain("invocation: inv-2\n");
    expect(r.stderr).toContain('File "handler.py", line 2');
    expect(r.stderr).toContain(
      "hint: the Run stays Ready; see the invocation's output with `krt logs boom --call inv-2`",
    );
  });

  test.each([
    [
      "denied",
      ExitCode.Forbidden,
      'you may not create runs.kruntimes.io/invoke "denied" in namespace "team"',
    ],
    ["missing", ExitCode.NotFound, 'run "missing" in namespace "team" not found'],
    ["pending", ExitCode.NotReady, "(phase Pending, mode function)"],
    ["huge", ExitCode.TooLarge, "request too large"],
    ["busy", ExitCode.Busy, "the function is busy (retry after 2s)"],
    ["gone", ExitCode.FunctionUnavailable, "(retry after 1s)"],
    ["slow", ExitCode.DeadlineExceeded, "did not finish in time"],
  ] as const)("gateway error for run %s: its own exit code", async (run, code, message) => {
    const r = await krt([run, "-d", "{}", ...via()]);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain("hint: ");
  });

  test("--token wins over the kubeconfig; a wrong token is refused (77)", async () => {
    const wrong = await krt(["echo", "--token", "nope", ...via()]);
    expect(wrong.code).toBe(ExitCode.Forbidden);
    expect(wrong.stderr).toContain("the gateway refused the token");
    const right = await krt(["echo", "-d", "x", "--token", TOKEN, ...via()], { kubeconfig: certConfig });
    expect(right.stdout).toBe("x");
  });

  test("a client-certificate kubeconfig without --token: exit 78 and what to do instead", async () => {
    const r = await krt(["echo", ...via()], { kubeconfig: certConfig });
    expect(r.code).toBe(ExitCode.Config);
    expect(r.stderr).toContain(
      "authenticates with a client certificate; the gateway checks bearer tokens only",
    );
    expect(r.stderr).toContain("hint: pass one with --token");
    expect(r.stderr).toContain("kubectl create token");
  });

  test("TLS: without the CA the certificate does not verify (69 with a hint); --insecure-skip-tls-verify", async () => {
    const r = await krt(["echo", "--gateway", gw.url]);
    expect(r.code).toBe(ExitCode.Unavailable);
    expect(r.stderr).toContain("cannot reach the gateway (url)");
    expect(r.stderr).toContain("--ca-file");
    const insecure = await krt(["echo", "-d", "y", "--gateway", gw.url, "--insecure-skip-tls-verify"]);
    expect(insecure.code).toBe(0);
    expect(insecure.stdout).toBe("y");
  });

  test("$KRT_GATEWAY names the gateway when --gateway does not", async () => {
    const r = await krt(["echo", "-d", "env", "--ca-file", caFile], { env: { KRT_GATEWAY: gw.url } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("env");
  });

  test("bad flags exit 64 before anything is sent", async () => {
    for (const [args, message] of [
      [["echo", "-H", "nocolon", ...via()], '-H "nocolon" is not a header'],
      [["echo", "--timeout", "soon", ...via()], '--timeout "soon" is not a duration'],
      [["echo", "--gateway-via", "carrier-pigeon"], '--gateway-via "carrier-pigeon"'],
      [["echo", "-o", "yaml", ...via()], "-o yaml does not apply to krt invoke"],
      [["echo", "--gateway", "ftp://x", "--ca-file", caFile], "must be an http:// or https:// URL"],
    ] as const) {
      const r = await krt([...args]);
      expect(`${args.join(" ")} → ${r.code}`).toBe(`${args.join(" ")} → ${ExitCode.Usage}`);
      expect(r.stderr).toContain(message);
    }
  });
});
