/**
 * A throwaway CA and a server certificate signed by it (openssl), for tests that verify the https
 * listener strictly against their own CA.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

function openssl(args: string[], cwd: string): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stderr: "pipe", stdout: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
}

export function makeTestPki(names: { dns?: string[]; ips?: string[] } = {}): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "krt-gateway-pki-"));
  const san = [
    ...(names.dns ?? ["localhost"]).map((d) => `DNS:${d}`),
    ...(names.ips ?? ["127.0.0.1"]).map((i) => `IP:${i}`),
  ];
  writeFileSync(join(dir, "ext.cnf"), `subjectAltName=${san.join(",")}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=kruntimes test CA",
    ],
    dir,
  );
  openssl(
    [
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "tls.key",
      "-out",
      "tls.csr",
      "-subj",
      "/CN=kruntimes-gateway",
    ],
    dir,
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "tls.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
    ],
    dir,
  );
  return { dir, caFile: join(dir, "ca.crt"), certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key") };
}
