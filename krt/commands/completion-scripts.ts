/**
 * The bash and zsh completion scripts, rendered from the command definitions: command words
 * (two-word groups such as `runtime list` complete their second word), each command's flags, and
 * Run names (from `krt list -o name`, in the namespace/context the command line names) for
 * commands that take a Run.
 */

export interface CompletionEntry {
  /** e.g. `runtime list`. */
  path: string;
  flags: string[];
  /** The command's positional is a Run name (complete with `krt list -o name`). */
  takesRun: boolean;
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
  local flags="" runs=0
  case "$cmd" in
${cases(commands, (c) => `flags="${c.flags.join(" ")}"; runs=${c.takesRun ? 1 : 0}`)}
  esac
  if [[ $cur == -* || $runs -eq 0 ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    local scope=() i
    for ((i = 1; i < COMP_CWORD; i++)); do
      case "\${COMP_WORDS[i]}" in
        -n|--namespace|--context|--kubeconfig) scope+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i+1]}") ;;
      esac
    done
    COMPREPLY=($(compgen -W "$(krt list -o name "\${scope[@]}" 2>/dev/null)" -- "$cur"))
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
  local -a flags; local runs=0
  case "$cmd" in
${cases(commands, (c) => `flags=(${c.flags.join(" ")}); runs=${c.takesRun ? 1 : 0}`)}
  esac
  if [[ $PREFIX == -* || $runs == 0 ]]; then
    compadd -- $flags
  else
    local -a scope; local i
    for (( i = 2; i < CURRENT; i++ )); do
      case "\${words[i]}" in
        -n|--namespace|--context|--kubeconfig) scope+=("\${words[i]}" "\${words[i+1]}") ;;
      esac
    done
    compadd -- \${(f)"$(krt list -o name $scope 2>/dev/null)"}
  fi
}
compdef _krt krt
`;
}
