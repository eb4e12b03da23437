import { canonical, type Question } from '../../contract/index.ts';

/**
 * Label priors measured on a content-free state, per question, for contextual calibration
 * ("Calibrate Before Use", Zhao et al. 2021). A prior depends only on the model and the question
 * (not on the state), so it is computed once and reused. Bounded, least recently used first out.
 */
export class PriorCache {
  readonly #entries = new Map<string, number[]>();
  constructor(readonly capacity = 1024) {}

  static key(modelKey: string, question: Question): string {
    return JSON.stringify([modelKey, canonical(question)]);
  }

  get(key: string): number[] | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, prior: number[]): void {
    this.#entries.delete(key);
    this.#entries.set(key, prior);
    while (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
