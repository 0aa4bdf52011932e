/**
 * The bash and zsh completion scripts, rendered from the command definitions: command words
 * (two-word groups such as `runtime list` complete their second word), each command's flags, and
 * the names of what a command takes — Runs (`krt list -o name`), WorkflowRuns (`krt wfrun list -o
 * name`), Workflows (`krt workflow list -o name`) — in the namespace/context the command line names.
 */

export interface CompletionEntry {
  /** e.g. `runtime list`. */
  path: string;
  flags: string[];
  /** The krt command whose `-o name` lists what the positional names (`list`, `wfrun list`); none: flags only. */
  names?: string;
}

function cases(commands: readonly CompletionEntry[], render: (c: CompletionEntry) => string): string {
  return commands
    .filter((c) => c.path)
    .map((c) => `    "${c.path}") ${render(c)} ;;`)
    .join("\n");
}

const firstWords = (commands: readonly CompletionEntry[]) =>
  [...new Set(commands.map((c) => c.path.split(" ")[0]).filter(Boolean))].join(" ");

/** `runtime` → `list get`: the groups whose commands are two words. */
function groups(commands: readonly CompletionEntry[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of commands) {
    const [group, sub] = c.path.split(" ");
    if (group && sub) out.set(group, [...(out.get(group) ?? []), sub]);
  }
  return out;
}

function groupCases(commands: readonly CompletionEntry[], render: (subs: string) => string): string {
  return [...groups(commands)].map(([g, subs]) => `    ${g}) ${render(subs.join(" "))} ;;`).join("\n");
}

export function bashCompletion(commands: readonly CompletionEntry[]): string {
  const groupNames = [...groups(commands).keys()].join("|");
  return `# bash completion for krt; load with: source <(krt completion bash)
_krt() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="\${COMP_WORDS[1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${firstWords(commands)}" -- "$cur")); return
  fi
  if [[ $COMP_CWORD -eq 2 ]]; then
    case "$cmd" in
${groupCases(commands, (subs) => `COMPREPLY=($(compgen -W "${subs}" -- "$cur")); return`)}
    esac
  fi
  case "$cmd" in ${groupNames || "__none__"}) cmd="$cmd \${COMP_WORDS[2]}" ;; esac
  local flags="" names=""
  case "$cmd" in
${cases(commands, (c) => `flags="${c.flags.join(" ")}"; names="${c.names ?? ""}"`)}
  esac
  if [[ $cur == -* || -z $names ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    local scope=() i
    for ((i = 1; i < COMP_CWORD; i++)); do
      case "\${COMP_WORDS[i]}" in
        -n|--namespace|--context|--kubeconfig) scope+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i+1]}") ;;
      esac
    done
    COMPREPLY=($(compgen -W "$(krt $names -o name "\${scope[@]}" 2>/dev/null)" -- "$cur"))
  fi
}
complete -F _krt krt
`;
}

export function zshCompletion(commands: readonly CompletionEntry[]): string {
  const groupNames = [...groups(commands).keys()].join("|");
  return `#compdef krt
# zsh completion for krt; install with: krt completion zsh > ~/.zfunc/_krt (with ~/.zfunc in $fpath)
_krt() {
  local cmd=\${words[2]}
  if (( CURRENT == 2 )); then
    compadd -- ${firstWords(commands)}; return
  fi
  if (( CURRENT == 3 )); then
    case $cmd in
${groupCases(commands, (subs) => `compadd -- ${subs}; return`)}
    esac
  fi
  case $cmd in ${groupNames || "__none__"}) cmd="$cmd \${words[3]}" ;; esac
  local -a flags names
  case "$cmd" in
${cases(commands, (c) => `flags=(${c.flags.join(" ")}); names=(${c.names ?? ""})`)}
  esac
  if [[ $PREFIX == -* || \${#names} == 0 ]]; then
    compadd -- $flags
  else
    local -a scope; local i
    for (( i = 2; i < CURRENT; i++ )); do
      case "\${words[i]}" in
        -n|--namespace|--context|--kubeconfig) scope+=("\${words[i]}" "\${words[i+1]}") ;;
      esac
    done
    compadd -- \${(f)"$(krt $names -o name $scope 2>/dev/null)"}
  fi
}
compdef _krt krt
`;
}
