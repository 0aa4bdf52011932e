import { describe, expect, test } from "bun:test";
import { CliError, connectionFailure } from "./errors.ts";
import { ExitCode } from "./exit-codes.ts";

const err = (code: string, message = "boom") => Object.assign(new Error(message), { code });

describe("connection failures name the server and where it came from", () => {
  test("each failure in words", () => {
    expect(connectionFailure(err("ConnectionRefused", "Unable to connect")).what).toBe("connection refused");
    expect(connectionFailure(err("ENOTFOUND")).what).toBe("the host name does not resolve");
    expect(connectionFailure(err("ETIMEDOUT")).what).toBe("the connection timed out");
    expect(connectionFailure(err("UNABLE_TO_VERIFY_LEAF_SIGNATURE"))).toEqual({
      what: "its TLS certificate does not verify (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
      tls: true,
    });
  });
  test("a kubeconfig context", () => {
    const e = CliError.from(err("ECONNREFUSED"), {
      server: "https://10.0.0.1:6443",
      contextName: "prod",
      source: "/home/me/.kube/config",
    });
    expect(e.exitCode).toBe(ExitCode.Unavailable);
    expect(e.message).toBe(
      'cannot reach the Kubernetes API server https://10.0.0.1:6443 (context "prod" of /home/me/.kube/config): connection refused',
    );
  });
  test("in-cluster, and a certificate for another cluster", () => {
    const e = CliError.from(err("SELF_SIGNED_CERT_IN_CHAIN"), {
      server: "https://10.96.0.1:443",
      source: "in-cluster",
    });
    expect(e.message).toBe(
      "cannot reach the Kubernetes API server https://10.96.0.1:443 (the in-cluster service account): its TLS certificate does not verify (SELF_SIGNED_CERT_IN_CHAIN)",
    );
    expect(e.hint).toContain("certificate-authority");
  });
});
