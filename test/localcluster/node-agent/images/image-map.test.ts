import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImageMap } from "./image-map.ts";
import { parseImageRef } from "./image-ref.ts";

describe("image references", () => {
  test.each([
    ["busybox", "docker.io/library/busybox", undefined],
    ["busybox:1.36", "docker.io/library/busybox", "1.36"],
    ["library/busybox@sha256:abc", "docker.io/library/busybox", undefined],
    ["index.docker.io/library/busybox", "docker.io/library/busybox", undefined],
    ["ghcr.io/kruntimes/runtimed:v1", "ghcr.io/kruntimes/runtimed", "v1"],
    ["localhost:5000/app", "localhost:5000/app", undefined],
    ["me/app:2", "docker.io/me/app", "2"],
  ])("%p → %p %p", (ref, repository, tag) => {
    const r = parseImageRef(ref);
    expect(r.repository).toBe(repository);
    expect(r.tag).toBe(tag);
  });
});

describe("image map", () => {
  const repo = mkdtempSync("/tmp/krt-image-map-");
  mkdirSync(join(repo, "bin"));
  writeFileSync(join(repo, "bin/app.ts"), "");
  const map = new ImageMap("images.yaml", repo, {
    images: {
      busybox: { cmd: ["sh"] },
      "kruntimes.local/app:v2": { entrypoint: ["bun", "v2.ts"], workingDir: "sub" },
      "kruntimes.local/app": { entrypoint: ["bun", "bin/app.ts", "missing/file.ts"], env: { A: "1" } },
    },
  });
  test("docker.io/library names match the short key", () => {
    expect(map.resolve("docker.io/library/busybox:1.36")?.key).toBe("busybox");
  });
  test("a tagged key wins for its tag; the untagged key serves the rest", () => {
    expect(map.resolve("kruntimes.local/app:v2")?.workingDir).toBe(join(repo, "sub"));
    expect(map.resolve("kruntimes.local/app:v3")?.key).toBe("kruntimes.local/app");
  });
  test("relative paths of repository files become absolute; others stay; no workingDir is the repo", () => {
    const r = map.resolve("kruntimes.local/app")!;
    expect(r.entrypoint).toEqual(["bun", join(repo, "bin/app.ts"), "missing/file.ts"]);
    expect(r.workingDir).toBe(repo);
    expect(r.env).toEqual({ A: "1" });
    expect(r.imageID).toMatch(/^krtlocal:\/\/kruntimes\.local\/app@sha256:[0-9a-f]{64}$/);
  });
  test("unknown images resolve to nothing; a malformed map is refused", () => {
    expect(map.resolve("ghcr.io/nobody/else")).toBeUndefined();
    expect(() => new ImageMap("f", repo, { images: { x: { cmd: "sh" } } })).toThrow(/list of strings/);
    expect(() => new ImageMap("f", repo, { nope: 1 })).toThrow(/images/);
  });
  test("the repository's images.yaml parses and maps the required images", () => {
    const real = ImageMap.load(
      join(import.meta.dir, "../../images.yaml"),
      join(import.meta.dir, "../../../.."),
    );
    for (const img of [
      "kruntimes.local/test/http-server",
      "busybox:1.36",
      "debian:12",
      "ghcr.io/kruntimes/runtimed:dev",
    ]) {
      expect(real.resolve(img)).toBeDefined();
    }
    expect(real.resolve("bash")?.cmd).toEqual(["bash"]);
  });
});
