// Types of bench/lib/loopback.mjs for the TypeScript benches (the repository does not type-check JavaScript).
export function loopbackAddressOf(n: number): string;
