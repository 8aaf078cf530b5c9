/**
 * Splits a column's height between its panels. The growing panel (the output) first reserves its
 * minimum; then, by priority, each panel gets what it wants if that fits, else what is left if
 * that is at least its minimum, else nothing (it is left out rather than squeezed to nothing).
 * What remains goes to the growing panel. The result sums to `available` exactly, so the screen
 * never grows past the terminal.
 */

export interface Slot<Id extends string> {
  readonly id: Id;
  /** Smallest useful height (a frame needs 3: two borders and a row). */
  readonly min: number;
  readonly want: number;
  /** Lower is more important. */
  readonly priority: number;
  readonly grow?: boolean;
}

export interface Placed<Id extends string> {
  readonly id: Id;
  readonly height: number;
}

export function allocate<Id extends string>(slots: readonly Slot<Id>[], available: number): Placed<Id>[] {
  const heights = new Map<Id, number>();
  let spare = Math.max(0, available);
  const grower = slots.find((slot) => slot.grow && slot.min <= spare);
  if (grower) spare -= grower.min;
  const byPriority = slots
    .map((slot, order) => ({ slot, order }))
    .sort((a, b) => a.slot.priority - b.slot.priority || a.order - b.order);
  for (const { slot } of byPriority) {
    if (slot === grower || slot.grow) continue;
    const height = slot.want <= spare ? Math.max(slot.min, slot.want) : slot.min <= spare ? spare : 0;
    if (height === 0 || height > spare) continue;
    heights.set(slot.id, height);
    spare -= height;
  }
  if (grower) heights.set(grower.id, grower.min + spare);
  else {
    // No growing panel: the last panel shown takes the rest, so the column still fills its height.
    const last = slots.findLast((slot) => heights.has(slot.id));
    if (last) heights.set(last.id, (heights.get(last.id) ?? 0) + spare);
  }
  return slots
    .filter((slot) => heights.has(slot.id))
    .map((slot) => ({ id: slot.id, height: heights.get(slot.id) ?? 0 }));
}
