import { describe, expect, test } from "bun:test";
import { isLoopback, OptionsError, parseOptions } from "./options.ts";

describe("parseOptions", () => {
  test("defaults: token auth on every interface, port 8080", () => {
    const o = parseOptions([], {});
    expect(o).toMatchObject({ host: "0.0.0.0", port: 8080, auth: "token", gatewayNamespace: "kruntimes" });
    expect(o.kubeconfig).toBeUndefined();
  });

  test("flags win over the environment, both spellings", () => {
    const o = parseOptions(["--port=9000", "--host", "127.0.0.1"], {
      KRT_DASHBOARD_PORT: "1",
      KUBECONFIG: "/a:/b",
    });
    expect(o.port).toBe(9000);
    expect(o.host).toBe("127.0.0.1");
    expect(o.kubeconfig).toBe("/a");
  });

  test("local mode (kubeconfig credentials) is refused on a non-loopback address", () => {
    expect(() => parseOptions(["--auth", "kubeconfig"], {})).toThrow(OptionsError);
    expect(() => parseOptions(["--auth", "kubeconfig", "--host", "10.0.0.1"], {})).toThrow(/loopback only/);
    expect(parseOptions(["--auth", "kubeconfig", "--host", "127.0.0.1"], {}).auth).toBe("kubeconfig");
  });

  test("bad values say what is wrong", () => {
    expect(() => parseOptions(["--port", "x"], {})).toThrow(/--port "x"/);
    expect(() => parseOptions(["--auth", "basic"], {})).toThrow(/token or kubeconfig/);
    expect(() => parseOptions(["--nope", "1"], {})).toThrow(/unknown flag --nope/);
    expect(() => parseOptions(["--port"], {})).toThrow(/needs a value/);
  });

  test("isLoopback", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "10.0.0.1", "::", "example.com"]) expect(isLoopback(h)).toBe(false);
  });
});
