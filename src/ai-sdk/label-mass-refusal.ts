/**
 * The refusal rule: a question whose labels got less than `floor` of the model's next-token
 * probability (the answer mass, before renormalising over the labels) is declined. A floor of 0
 * never refuses; a mass that was not reported never refuses.
 */
export function refusesBelow(mass: number | undefined, floor: number): boolean {
  return mass !== undefined && mass < floor;
}
