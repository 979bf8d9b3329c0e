/**
 * The full board API package (zod schemas, the operation table with schemas, OpenAPI), loaded on first use.
 *
 * zod and the schemas cost ~14 MB of the 128 MB controller, so the agent routes from the schema-free
 * `@tpfleet/board-api/routes` and imports the full package only off the hot path: response validation
 * (`--validate-responses`), the OpenAPI document, the JSON bodies of the access operations, the legacy `node_info`
 * body and the persisted firmware catalogue. Type-only imports of `@tpfleet/board-api` cost nothing at run time.
 */
type BoardApi = typeof import('@tpfleet/board-api');

let loading: Promise<BoardApi> | undefined;

export function loadBoardApi(): Promise<BoardApi> {
  return (loading ??= import('@tpfleet/board-api'));
}
