/**
 * mulberry32: a small seeded pseudo-random generator, so every run of a spec or bench draws the same
 * values and a failure can be replayed with its seed. Not for anything secret.
 * @param seed any integer (taken modulo 2^32).
 * @returns a function giving the next value, uniform in [0, 1).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Standard normal draws (Box–Muller over {@link seededRandom}), for synthetic embedding vectors.
 * @returns a function giving the next value, mean 0 and variance 1.
 */
export function seededNormal(seed: number): () => number {
  const uniform = seededRandom(seed);
  return () => {
    const u = 1 - uniform(); // (0, 1]: log never sees 0
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}
