/**
 * Standard errors of Platt scaling's (a, b) from the Fisher information of logistic regression at
 * (a0, b0): I = Σ w [x², x; x, 1], with w = σ(1 − σ) and σ = σ(a0·x + b0); the covariance of
 * (â, b̂) is I⁻¹, so SE(a) = √(I_bb / det I) and SE(b) = √(I_aa / det I).
 */
export function plattStandardErrors(xs: readonly number[], a0: number, b0: number): { seA: number; seB: number } {
  let iaa = 0;
  let iab = 0;
  let ibb = 0;
  for (const x of xs) {
    const s = 1 / (1 + Math.exp(-(a0 * x + b0)));
    const w = s * (1 - s);
    iaa += w * x * x;
    iab += w * x;
    ibb += w;
  }
  const det = iaa * ibb - iab * iab;
  return { seA: Math.sqrt(ibb / det), seB: Math.sqrt(iaa / det) };
}
