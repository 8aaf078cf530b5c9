/**
 * Whether the environment says "continuous integration", by the rule Ink itself follows
 * (the `is-in-ci` package): `CI` or `CONTINUOUS_INTEGRATION` present with any value, even empty,
 * except `0` and `false`. In CI Ink draws only the last frame, so the full-screen app would sit
 * blank until the end: one rule here keeps the front-end choice and Ink in agreement.
 */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  return present(env.CI) || present(env.CONTINUOUS_INTEGRATION);
}

function present(value: string | undefined): boolean {
  return value !== undefined && value !== '0' && value !== 'false';
}
