/**
 * A binary min-heap with an index per item, so an item already in the heap can be moved
 * (`update`) or removed in O(log n). Items are identified by a string key.
 */
export class KeyedHeap<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** Adds the item, or replaces the item with the same key and restores the order. */
  push(item: T): void {
    const key = this.keyOf(item);
    const at = this.index.get(key);
    if (at !== undefined) {
      this.items[at] = item;
      this.fix(at);
      return;
    }
    this.items.push(item);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    return this.removeAt(0);
  }

  remove(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.removeAt(i);
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  private removeAt(i: number): T {
    const last = this.items.length - 1;
    const item = this.items[i] as T;
    this.swap(i, last);
    this.items.pop();
    this.index.delete(this.keyOf(item));
    if (i < this.items.length) this.fix(i);
    return item;
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  private up(i: number): boolean {
    let moved = false;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i] as T, this.items[parent] as T)) break;
      this.swap(i, parent);
      i = parent;
      moved = true;
    }
    return moved;
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      let m = l;
      if (r < n && this.less(this.items[r] as T, this.items[l] as T)) m = r;
      if (!this.less(this.items[m] as T, this.items[i] as T)) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    if (i === j) return;
    const a = this.items[i] as T;
    const b = this.items[j] as T;
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(this.keyOf(b), i);
    this.index.set(this.keyOf(a), j);
  }
}
