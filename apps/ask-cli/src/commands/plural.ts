/**
 * `n` and the word in the number it takes: `count(1, 'document')` → `1 document`, `count(3, 'document')`
 * → `3 documents`; `plural` names an irregular form (`count(2, 'query', 'queries')`).
 */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}
