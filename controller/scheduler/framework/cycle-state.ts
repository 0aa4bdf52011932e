/** Per-cycle scratch space plugins share between their extension points; cleared every cycle. */
export class CycleState {
  private readonly data = new Map<string, unknown>();

  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }
  clear(): void {
    this.data.clear();
  }
}
