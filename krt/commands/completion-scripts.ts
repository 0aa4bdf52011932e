/** The bash and zsh completion scripts, rendered from the command definitions. */

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

export function bashCompletion(commands: readonly CompletionEntry[]): string {
  return `# bash completion for krt; load with: source <(krt completion bash)
_krt() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="\${COMP_WORDS[1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "${firstWords(commands)}" -- "$cur")); return
  fi
  if [[ $cmd == runtime && $COMP_CWORD -eq 2 ]]; then
    COMPREPLY=($(compgen -W "list get" -- "$cur")); return
  fi
  [[ $cmd == runtime ]] && cmd="runtime \${COMP_WORDS[2]}"
  local flags="" runs=0
  case "$cmd" in
${cases(commands, (c) => `flags="${c.flags.join(" ")}"; runs=${c.takesRun ? 1 : 0}`)}
  esac
  if [[ $cur == -* || $runs -eq 0 ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(krt list -o name 2>/dev/null)" -- "$cur"))
  fi
}
complete -F _krt krt
`;
}

export function zshCompletion(commands: readonly CompletionEntry[]): string {
  return `#compdef krt
# zsh completion for krt; install with: krt completion zsh > ~/.zfunc/_krt (with ~/.zfunc in $fpath)
_krt() {
  local cmd=\${words[2]}
  if (( CURRENT == 2 )); then
    compadd -- ${firstWords(commands)}; return
  fi
  if [[ $cmd == runtime ]] && (( CURRENT == 3 )); then
    compadd -- list get; return
  fi
  [[ $cmd == runtime ]] && cmd="runtime \${words[3]}"
  local -a flags; local runs=0
  case "$cmd" in
${cases(commands, (c) => `flags=(${c.flags.join(" ")}); runs=${c.takesRun ? 1 : 0}`)}
  esac
  if [[ $PREFIX == -* || $runs == 0 ]]; then
    compadd -- $flags
  else
    compadd -- \${(f)"$(krt list -o name 2>/dev/null)"}
  fi
}
compdef _krt krt
`;
}
