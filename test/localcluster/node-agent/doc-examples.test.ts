/** The examples in docs/local-cluster-node-agent.md are real: the config parses, the image map resolves. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { type AgentConfig, resolveConfig } from "./config.ts";
import { ImageMap } from "./images/image-map.ts";

const doc = readFileSync(join(import.meta.dir, "../../../docs/local-cluster-node-agent.md"), "utf8");
const block = (lang: string) => {
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(doc);
  if (!m) throw new Error(`no ${lang} block in the doc`);
  return m[1]!;
};

describe("docs/local-cluster-node-agent.md", () => {
  test("the config example parses, resolves relative paths and takes the documented defaults", () => {
    const cfg = resolveConfig(JSON.parse(block("json")) as Partial<AgentConfig>, "/etc/krt");
    expect(cfg.kubeconfig).toBe("/etc/krt/node.kubeconfig");
    expect(cfg.stateDir).toBe("/etc/krt/node");
    expect(cfg.restartBackoffInitialMs).toBe(1000);
    expect(cfg.restartBackoffMaxMs).toBe(30_000);
    expect(cfg.shutdownGraceMs).toBe(8000);
  });
  test("the image map example resolves as described", () => {
    const map = new ImageMap("example.yaml", "/repo", parse(block("yaml")));
    expect(map.resolve("docker.io/library/busybox:1.36")).toMatchObject({
      cmd: ["sh"],
      env: { EXAMPLE: "1" },
      workingDir: "/",
    });
    expect(map.resolve("kruntimes.local/test/http-server:latest")?.workingDir).toBe("/repo");
  });
  test("the config requires its essentials", () => {
    expect(() => resolveConfig({ nodeName: "n" }, "/")).toThrow(/"kubeconfig" is required/);
    expect(() =>
      resolveConfig({ ...(JSON.parse(block("json")) as object), servingKeyFile: "" }, "/"),
    ).toThrow(/kubeletPort needs/);
  });
});
