// The healthy tiles the profile bench fetches, in Node (bench/profile-run.mjs) and in Chromium
// (bench/profile.mjs): `count` distinct tiles of zoom 15, 40 to a row, rows from `firstRow`.
export const profileTiles = (serverUrl, count, firstRow) =>
  Array.from({ length: count }, (_, k) => `${serverUrl}/tile/15/${16000 + (k % 40)}/${firstRow + Math.floor(k / 40)}.png?run=profile`);
