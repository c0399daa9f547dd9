/**
 * A small covering LP, solved exactly with the simplex method on its dual:
 *
 *   minimise c·r  subject to  A r ≥ b,  r ≥ 0        (A: one row per message, one column per feature)
 *
 * The dual `maximise b·y subject to Aᵀy ≤ c, y ≥ 0` has one constraint per feature (34) and one variable
 * per message, so its tableau is 34 rows wide and the slack basis is feasible from the start (c ≥ 0).
 * The optimal rates r are the dual prices of those 34 constraints, read off the objective row.
 */
export interface LpResult {
  rates: Float64Array;
  objective: number;
  iterations: number;
}

const EPS = 1e-9;

/**
 * @param rows feature vectors (length n each), one per constraint
 * @param b right-hand sides (≥ 0), one per row
 * @param c objective weights per feature (≥ 0)
 * @throws Error when the LP is infeasible (a row with b > 0 and no feature) or does not converge.
 */
export function solveCoveringLp(rows: readonly Float64Array[], b: readonly number[], c: readonly number[]): LpResult {
  const n = c.length;
  const m = rows.length;
  const width = m + n; // y columns, then slack columns
  // tableau[i] = row i of [Aᵀ | I], rhs[i]
  const tableau: Float64Array[] = [];
  const rhs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const row = new Float64Array(width);
    for (let j = 0; j < m; j++) row[j] = rows[j][i];
    row[m + i] = 1;
    tableau.push(row);
    rhs[i] = c[i];
  }
  // reduced costs d_j = obj_j − z_j; start: obj = b for y columns, 0 for slacks
  const d = new Float64Array(width);
  for (let j = 0; j < m; j++) d[j] = b[j];
  let objective = 0;
  const basis = Array.from({ length: n }, (_, i) => m + i);
  let iterations = 0;
  let stall = 0;
  let bland = false;
  for (;;) {
    let enter = -1;
    if (bland) {
      for (let j = 0; j < width; j++)
        if (d[j] > EPS) {
          enter = j;
          break;
        }
    } else {
      let best = EPS;
      for (let j = 0; j < width; j++)
        if (d[j] > best) {
          best = d[j];
          enter = j;
        }
    }
    if (enter < 0) break;
    let leave = -1;
    let bestRatio = Infinity;
    for (let i = 0; i < n; i++) {
      const a = tableau[i][enter];
      if (a > EPS) {
        const ratio = rhs[i] / a;
        if (ratio < bestRatio - EPS || (ratio < bestRatio + EPS && leave >= 0 && basis[i] < basis[leave])) {
          bestRatio = ratio;
          leave = i;
        }
      }
    }
    if (leave < 0) throw new Error(`LP infeasible: message column ${enter} is not covered by any feature`);
    const pivotRow = tableau[leave];
    const pivot = pivotRow[enter];
    for (let j = 0; j < width; j++) pivotRow[j] /= pivot;
    rhs[leave] /= pivot;
    for (let i = 0; i < n; i++) {
      if (i === leave) continue;
      const row = tableau[i];
      const factor = row[enter];
      if (factor === 0) continue;
      for (let j = 0; j < width; j++) row[j] -= factor * pivotRow[j];
      rhs[i] -= factor * rhs[leave];
    }
    const factor = d[enter];
    for (let j = 0; j < width; j++) d[j] -= factor * pivotRow[j];
    const gain = factor * rhs[leave];
    objective += gain;
    basis[leave] = enter;
    iterations++;
    if (gain <= EPS) {
      stall++;
      if (stall > 50) bland = true;
    } else stall = 0;
    if (iterations > 200_000) throw new Error('LP did not converge');
  }
  const rates = new Float64Array(n);
  for (let i = 0; i < n; i++) rates[i] = Math.max(0, -d[m + i]);
  return { rates, objective, iterations };
}
