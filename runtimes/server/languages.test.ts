import { describe, expect, test } from "bun:test";
import { adapters, interpreterVersion, warmUnsupported } from "./languages.ts";

describe("languages", () => {
  test("interpreter versions read from the interpreters themselves", () => {
    expect(interpreterVersion(adapters.bash, "/bin/bash")).toMatch(/^GNU bash \d+\.\d+/);
    expect(interpreterVersion(adapters.python, "/usr/bin/python3")).toMatch(/^Python 3\.\d+\.\d+/);
    expect(() => interpreterVersion(adapters.bash, "/nonexistent/bash")).toThrow(/set --interpreter/);
  });

  test("bash before 5.0 cannot be kept warm; python and newer bash can", () => {
    expect(warmUnsupported("bash", "GNU bash 4.2.46(2)-release")).toContain("BASH_ARGV0");
    expect(warmUnsupported("bash", "GNU bash 5.2.15(1)-release")).toBeUndefined();
    expect(warmUnsupported("python", "Python 3.6.15")).toBeUndefined();
  });
});
