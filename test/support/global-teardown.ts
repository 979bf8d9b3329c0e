// Nothing to undo: per-file databases are dropped by their files, and the template is kept for the next run.
export default async function globalTeardown(): Promise<void> {}
