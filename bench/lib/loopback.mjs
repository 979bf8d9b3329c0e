// Loopback addresses for benches that give each simulated board an origin of its own, as real boards have (a rack or
// an agent listening on every address, 0.0.0.0): board n (from 1) at 127.0.1.1, 127.0.1.2, …, 250 to a /24.
export function loopbackAddressOf(n) {
  return `127.0.${1 + Math.floor((n - 1) / 250)}.${1 + ((n - 1) % 250)}`;
}
