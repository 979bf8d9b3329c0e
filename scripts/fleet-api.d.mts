// Types of scripts/fleet-api.mjs for the tests that import it (test/fleet-api).
export const DOCUMENT_FILE: string;
export const TYPES_FILE: string;
export function renderDocument(doc: unknown): Promise<string>;
export function renderTypes(doc: unknown): Promise<string>;
