/**
 * The images the chart runs and their Dockerfiles agree with each other and with the local node
 * agent's image map: every image the chart references has a Dockerfile that compiles the same
 * program the map runs, with the same arguments, as a non-root user, and scripts/kind-up.sh
 * builds and loads it. Docker cannot run here; these checks keep the two worlds from drifting.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { ROOT } from "./chart-support.ts";

const COMPONENTS = ["controller", "runtimed", "gateway", "bash", "python"] as const;
const imageMap = YAML.parse(readFileSync(join(ROOT, "test/localcluster/images.yaml"), "utf8")) as {
  images: Record<string, { entrypoint: string[] }>;
};

interface Dockerfile {
  stages: string[];
  compiles: string | undefined;
  binary: string | undefined;
  entrypoint: string[];
  user: string | undefined;
  text: string;
}

function parseDockerfile(component: string): Dockerfile {
  const text = readFileSync(join(ROOT, "images", component, "Dockerfile"), "utf8");
  const lines = text.split("\n");
  const stages = lines.filter((l) => l.startsWith("FROM ")).map((l) => l.slice(5).trim());
  const build = /bun build --compile\b.*--outfile (\S+) (\S+\.ts)$/m.exec(text);
  const entry = /^ENTRYPOINT (\[.*\])$/m.exec(text)?.[1];
  return {
    stages,
    compiles: build?.[2],
    binary: build?.[1] ? /COPY --from=build (\S+) (\S+)/.exec(text)?.[2] : undefined,
    entrypoint: entry ? (JSON.parse(entry) as string[]) : [],
    user: /^USER (\S+)$/m.exec(text)?.[1],
    text,
  };
}

describe("images", () => {
  test.each(COMPONENTS)("%s: multi-stage bun --compile build, slim non-root run stage", (component) => {
    const d = parseDockerfile(component);
    expect(d.stages[0]).toStartWith("oven/bun:");
    expect(d.stages.at(-1)).toMatch(/^(gcr\.io\/distroless\/cc-debian12:nonroot|debian:bookworm-slim)$/);
    expect(d.user).toBe("65532:65532");
    expect(d.binary).toBeDefined();
    expect(d.entrypoint[0]).toBe(d.binary as string);
  });

  test.each(COMPONENTS)("%s: runs what the local node agent runs for ghcr.io/kruntimes/%s", (component) => {
    const d = parseDockerfile(component);
    const local = imageMap.images[`ghcr.io/kruntimes/${component}`]?.entrypoint;
    expect(local).toBeDefined();
    const [bun, program, ...args] = local as string[];
    expect(bun).toBe("bun");
    expect(d.compiles).toBe(program as string);
    expect(d.entrypoint.slice(1)).toEqual(args);
    expect(existsSync(join(ROOT, program as string))).toBe(true);
  });

  test("the runtime images carry their interpreters", () => {
    expect(parseDockerfile("bash").text).toMatch(/apt-get install[^\n]*\bbash\b/);
    expect(parseDockerfile("python").text).toMatch(/apt-get install[^\n]*\bpython3\b/);
  });

  test("kind-up.sh builds the gateway image now that gateway/main.ts exists", () => {
    expect(existsSync(join(ROOT, "gateway/main.ts"))).toBe(true);
    const kind = readFileSync(join(ROOT, "scripts/kind-up.sh"), "utf8");
    expect(kind).toContain("if [[ -f gateway/main.ts ]]; then components+=(gateway); fi");
  });

  test("kind-up.sh builds and loads every image the chart runs, tagged with the chart's appVersion", async () => {
    const kind = readFileSync(join(ROOT, "scripts/kind-up.sh"), "utf8");
    const always = COMPONENTS.filter((c) => c !== "gateway");
    expect(kind).toContain(`components=(${always.join(" ")})`);
    expect(kind).toContain('docker build -f "images/$c/Dockerfile" -t "ghcr.io/kruntimes/$c:$tag" .');
    expect(kind).toContain('kind load docker-image --name "$cluster" "ghcr.io/kruntimes/$c:$tag"');
    // The tag expression yields the chart's appVersion.
    const sed = /^tag="\$\((sed .*)\)"$/m.exec(kind)?.[1];
    expect(sed).toBeDefined();
    const proc = Bun.spawn(["bash", "-c", sed as string], { cwd: ROOT, stdout: "pipe" });
    const tag = (await new Response(proc.stdout).text()).trim();
    const chart = YAML.parse(readFileSync(join(ROOT, "chart/Chart.yaml"), "utf8")) as { appVersion: string };
    expect(tag).toBe(chart.appVersion);
    for (const script of ["scripts/kind-up.sh", "scripts/kind-e2e.sh"]) {
      const check = Bun.spawnSync(["bash", "-n", script], { cwd: ROOT });
      expect(check.exitCode).toBe(0);
    }
  });
});
