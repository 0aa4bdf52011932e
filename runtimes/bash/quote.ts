/** Single-quotes a word for bash: every byte except NUL survives. */
export function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
