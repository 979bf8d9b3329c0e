// Placeholder until the test harness lands: nothing to prepare.
export default async function globalSetup(): Promise<void> {}
