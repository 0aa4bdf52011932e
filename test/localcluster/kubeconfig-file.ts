/** Writes kubeconfig files for the local cluster's identities (cert or token users). */
import { readFileSync, writeFileSync } from "node:fs";
import { stringify } from "yaml";

export interface KubeconfigUser {
  certFile?: string;
  keyFile?: string;
  token?: string;
}

export function writeKubeconfig(
  file: string,
  server: string,
  caFile: string,
  userName: string,
  user: KubeconfigUser,
) {
  const b64 = (f: string) => Buffer.from(readFileSync(f)).toString("base64");
  const u: Record<string, string> = {};
  if (user.certFile && user.keyFile) {
    u["client-certificate-data"] = b64(user.certFile);
    u["client-key-data"] = b64(user.keyFile);
  }
  if (user.token) u.token = user.token;
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "krt-local",
    clusters: [{ name: "krt-local", cluster: { server, "certificate-authority-data": b64(caFile) } }],
    users: [{ name: userName, user: u }],
    contexts: [
      { name: "krt-local", context: { cluster: "krt-local", user: userName, namespace: "default" } },
    ],
  };
  writeFileSync(file, stringify(doc), { mode: 0o600 });
}
