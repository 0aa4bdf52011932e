/**
 * The local cluster's PKI, minted with the openssl CLI: one CA, serving and client certs for each
 * component, a service-account signing key, and a static token file for tests. Files are reused
 * when present, so a restart of the cluster keeps its identity.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface CertSpec {
  name: string;
  cn: string;
  orgs?: string[];
  sans?: string[];
  usage: "server" | "client" | "both";
}

function openssl(args: string[], cwd: string): void {
  const p = Bun.spawnSync(["openssl", ...args], { cwd, stderr: "pipe", stdout: "pipe" });
  if (p.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${p.stderr.toString()}`);
}

export class LocalPki {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  file(name: string): string {
    return join(this.dir, name);
  }

  ensureCa(): void {
    if (existsSync(this.file("ca.crt"))) return;
    openssl(
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ca.key"],
      this.dir,
    );
    openssl(
      [
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-subj",
        "/CN=kruntimes-local-cluster-ca",
        "-days",
        "3650",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "-out",
        "ca.crt",
      ],
      this.dir,
    );
  }

  /** Issues `<name>.crt`/`<name>.key` signed by the CA unless they exist. */
  ensureCert(spec: CertSpec): { cert: string; key: string } {
    const cert = this.file(`${spec.name}.crt`);
    const key = this.file(`${spec.name}.key`);
    if (existsSync(cert) && existsSync(key)) return { cert, key };
    const subj = `/CN=${spec.cn}${(spec.orgs ?? []).map((o) => `/O=${o}`).join("")}`;
    const eku = { server: "serverAuth", client: "clientAuth", both: "serverAuth,clientAuth" }[spec.usage];
    const ext = [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      `extendedKeyUsage=${eku}`,
      ...(spec.sans?.length ? [`subjectAltName=${spec.sans.join(",")}`] : []),
    ].join("\n");
    const extFile = this.file(`${spec.name}.ext`);
    writeFileSync(extFile, `${ext}\n`);
    openssl(
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${spec.name}.key`],
      this.dir,
    );
    openssl(["req", "-new", "-key", `${spec.name}.key`, "-subj", subj, "-out", `${spec.name}.csr`], this.dir);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        `${spec.name}.csr`,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-extfile",
        `${spec.name}.ext`,
        "-out",
        `${spec.name}.crt`,
      ],
      this.dir,
    );
    return { cert, key };
  }

  /** RSA key pair the apiserver signs service-account tokens with. */
  ensureServiceAccountKey(): { key: string; pub: string } {
    const key = this.file("sa.key");
    const pub = this.file("sa.pub");
    if (!existsSync(key)) {
      openssl(
        ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key"],
        this.dir,
      );
      openssl(["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"], this.dir);
    }
    return { key, pub };
  }
}

/** Static bearer tokens for tests: one cluster admin, one user with no permissions at all. */
export interface TestTokens {
  admin: string;
  nobody: string;
}

export function ensureTokenFile(pki: LocalPki): { file: string; tokens: TestTokens } {
  const file = pki.file("tokens.csv");
  const tokensJson = pki.file("tokens.json");
  if (!existsSync(file)) {
    const rand = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
    const tokens: TestTokens = { admin: rand(), nobody: rand() };
    writeFileSync(
      file,
      `${tokens.admin},krt-test-admin,krt-test-admin,"system:masters"\n${tokens.nobody},krt-test-nobody,krt-test-nobody\n`,
      { mode: 0o600 },
    );
    writeFileSync(tokensJson, JSON.stringify(tokens), { mode: 0o600 });
  }
  return { file, tokens: JSON.parse(readFileSync(tokensJson, "utf8")) as TestTokens };
}
