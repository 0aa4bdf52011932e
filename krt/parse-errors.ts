/**
 * Flag-parsing errors in one line: clipanion's own report lists the usage of every candidate
 * command (dozens of lines for a mistyped flag); this says what was wrong and where to look.
 */

interface SyntaxErrorLike {
  message: string;
  candidates?: { usage: string }[];
}

/** `krt get [--kubeconfig #0] … <run>` → `["krt", "get"]`. */
function commandPath(usage: string): string[] {
  const words: string[] = [];
  for (const w of usage.split(" ")) {
    if (/^[[<.]/.test(w)) break;
    words.push(w);
  }
  return words;
}

/** The positional part of a usage line: `<run> <name>`, `<run> ...`. */
function positionals(usage: string): string {
  return usage
    .replace(/\[[^\]]*\]/g, "")
    .split(" ")
    .filter((w) => w.startsWith("<") || w === "...")
    .join(" ");
}

export function describeParseError(
  e: SyntaxErrorLike,
  argv: readonly string[],
): { message: string; hint: string } {
  const first = (e.message.split("\n")[0] ?? "").replace(/^Unknown Syntax Error: /, "").replace(/\.$/, "");
  const words = argv.filter((a) => !a.startsWith("-"));
  const candidates = (e.candidates ?? []).map((c) => ({ usage: c.usage, path: commandPath(c.usage) }));
  // The command the user meant: the candidate whose path the argv words start with, longest first.
  const matches = candidates
    .filter((c) => c.path.slice(1).every((w, i) => words[i] === w))
    .sort((a, b) => b.path.length - a.path.length);
  const meant = matches[0];
  const name = meant ? meant.path.join(" ") : "krt";
  const help = `see \`${name} --help\``;

  if (first.startsWith("Command not found")) {
    const typed = ["krt", ...words.slice(0, 2)].join(" ");
    const under = candidates.filter((c) => words.length > 0 && c.path[1] === words[0]);
    if (under.length > 0) {
      // A command with an alias path (`list`/`ls`) is a candidate once per path: name it once.
      const subs = [...new Set(under.map((c) => c.path.slice(2).join(" ")).filter(Boolean))];
      return {
        message: `"${typed}" needs a subcommand: ${subs.join(", ")}`,
        hint: `e.g. \`${under[0]!.path.join(" ")} --help\``,
      };
    }
    return { message: `unknown command "${typed}"`, hint: "see `krt --help` for the commands" };
  }
  const option = /^Unsupported option name \("(.+)"\)$/.exec(first);
  if (option) return { message: `${name}: unknown option "${option[1]}"`, hint: help };
  const extra = /^Extraneous positional argument \("(.+)"\)$/.exec(first);
  if (extra)
    return {
      message: `${name}: unexpected argument "${extra[1]}"`,
      hint: `usage: ${name} ${meant ? positionals(meant.usage) : ""}`.trimEnd() + `; ${help}`,
    };
  if (first === "Not enough positional arguments")
    return {
      message: `${name}: missing argument ${meant ? positionals(meant.usage) : ""}`.trimEnd(),
      hint: `usage: ${name} ${meant ? positionals(meant.usage) : ""}`.trimEnd() + `; ${help}`,
    };
  const value = /^Not enough arguments to option (.+)$/.exec(first);
  if (value) return { message: `${name}: ${value[1]} needs a value`, hint: help };
  return { message: `${name}: ${first}`, hint: help };
}
