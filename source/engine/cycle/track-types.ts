/**
 * Seed 003 P12: WORKFLOW.md's loading map goes from the track type to the living docs a track of
 * that type needs. The planner names the type in its TRACK block (TRACK_TYPE); `*` in the map is
 * every track.
 */
export const TRACK_TYPES = ['feature', 'bugfix', 'refactor', 'test', 'docs', 'infra'] as const;
export type TrackType = (typeof TRACK_TYPES)[number];

export function isTrackType(value: string): value is TrackType {
  return (TRACK_TYPES as readonly string[]).includes(value);
}
