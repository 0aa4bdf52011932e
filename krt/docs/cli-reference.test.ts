import { describe, expect, test } from "bun:test";
import { createCli } from "../cli.ts";
import { escapeHtml, renderCliReference } from "./cli-reference.ts";

describe("CLI reference and --help", () => {
  const cli = createCli();
  const defs = cli.definitions().filter((d) => d.description && !/ -h$/.test(d.path));

  test("every command has a description, an example and a described flag set", () => {
    expect(defs.length).toBeGreaterThanOrEqual(13);
    for (const d of defs) {
      expect({ path: d.path, examples: (d.examples?.length ?? 0) > 0 }).toEqual({
        path: d.path,
        examples: true,
      });
      for (const o of d.options)
        expect({ path: d.path, o: o.definition, ok: Boolean(o.description) }).toMatchObject({ ok: true });
    }
  });

  test("the reference has a section per command, the global flags once and every exit code", () => {
    const md = renderCliReference(cli);
    for (const d of defs) expect(md).toContain(`### \`${d.path}\``);
    expect(md.match(/--kubeconfig <value>/g)?.length).toBe(1);
    expect(md).toContain("| 83 |");
    expect(md).toContain("| 130 |");
  });

  test("angle brackets outside code spans are escaped for the docs site", () => {
    expect(escapeHtml("name <run> and `krt logs <run>`")).toBe("name &lt;run&gt; and `krt logs <run>`");
  });
});
